// GET /api/v1/stats (issue 12): the query's limits and the bucketing of the store's per-minute
// rows into steps. Pure functions, no store.
#include "api/stats.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "common/time_format.h"

namespace hookrelay::api {
namespace {

namespace json = boost::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

http::RequestHead Head(std::string query) {
  http::RequestHead h;
  h.method = "GET";
  h.path = "/api/v1/stats";
  h.query = std::move(query);
  return h;
}

TEST(StatsQueryTest, DefaultsAndLimits) {
  Result<StatsQuery> q = ParseStatsQuery(Head(""));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->window, hours(1));
  EXPECT_EQ(q->step, minutes(1));
  q = ParseStatsQuery(Head("window=24h&step=1h"));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->window, hours(24));
  EXPECT_EQ(q->step, hours(1));

  for (const char* bad : {"window=30s", "window=8d", "window=90s", "step=30s", "window=1h&step=2h",
                          "window=7d&step=1m", "window=soon", "steps=1m", "window=1h&window=2h"}) {
    Result<StatsQuery> r = ParseStatsQuery(Head(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_FALSE(r.status().field().empty()) << bad;
  }
}

TEST(StatsJsonTest, RowsLandInTheirStepsWithZerosBetween) {
  StatsQuery q;
  q.window = minutes(10);
  q.step = minutes(5);
  const TimePoint now = TimePoint(minutes(1000)) + seconds(20);  // minute 1000, partly gone
  auto [since, until] = StatsRange(q, now);
  EXPECT_EQ(until, TimePoint(minutes(1001)));
  EXPECT_EQ(since, TimePoint(minutes(991)));

  std::vector<store::StatsRow> rows = {
      {990, "", 7, 0, 0, 0, 0},         // before the window: ignored
      {991, "", 2, 0, 0, 0, 0},         // first step
      {995, "billing", 0, 1, 0, 3, 2},  // first step
      {996, "billing", 0, 0, 1, 1, 1},  // second step
      {1000, "", 1, 0, 0, 0, 0},        // the current minute: second step
      {1000, "crm", 0, 2, 0, 2, 0},
  };
  json::object o = StatsToJson(q, now, rows, 4, TimePoint(minutes(990)));
  const json::array& pts = o.at("points").as_array();
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0].at("at").as_string(), FormatRfc3339(TimePoint(minutes(991))));
  EXPECT_EQ(pts[0].at("received").as_int64(), 2);
  EXPECT_EQ(pts[0].at("delivered").as_int64(), 1);
  EXPECT_EQ(pts[0].at("attempts").as_int64(), 3);
  EXPECT_EQ(pts[1].at("received").as_int64(), 1);
  EXPECT_EQ(pts[1].at("delivered").as_int64(), 2);
  EXPECT_EQ(pts[1].at("failed").as_int64(), 1);
  EXPECT_EQ(o.at("totals").at("received").as_int64(), 3);
  EXPECT_EQ(o.at("totals").at("attempt_failures").as_int64(), 3);
  const json::array& d = o.at("destinations").as_array();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].at("name").as_string(), "billing");
  EXPECT_EQ(d[0].at("attempts").as_int64(), 4);
  EXPECT_EQ(d[1].at("name").as_string(), "crm");
  EXPECT_EQ(o.at("due").at("count").as_int64(), 4);
  EXPECT_EQ(o.at("due").at("oldest_due_at").as_string(), FormatRfc3339(TimePoint(minutes(990))));
  EXPECT_EQ(o.at("window").as_string(), "10m");

  json::object empty = StatsToJson(q, now, {}, 0, std::nullopt);
  EXPECT_TRUE(empty.at("due").at("oldest_due_at").is_null());
  EXPECT_EQ(empty.at("points").as_array().size(), 2u);
}

}  // namespace
}  // namespace hookrelay::api
