#include "alerts/alert_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "common/time_format.h"

namespace hookrelay::alerts {
namespace {

namespace json = boost::json;
using K = Alert::Kind;
using std::chrono::minutes;
using ::testing::HasSubstr;
using ::testing::Not;

TimePoint At(std::string_view rfc3339) { return *ParseRfc3339(rfc3339); }

Alert Make(K kind, std::string reason = {}) {
  Alert a;
  a.kind = kind;
  a.destination = "billing";
  a.at = At("2026-11-30T14:00:31Z");
  a.reason = std::move(reason);
  return a;
}

TEST(AlertTextTest, KindNames) {
  EXPECT_EQ(AlertKindName(K::kBreakerOpened), "breaker_opened");
  EXPECT_EQ(AlertKindName(K::kBreakerClosed), "breaker_closed");
  EXPECT_EQ(AlertKindName(K::kDeliveriesFailed), "deliveries_failed");
  EXPECT_EQ(AlertKindName(K::kDestinationPaused), "destination_paused");
  EXPECT_EQ(AlertKindName(K::kDestinationResumed), "destination_resumed");
  EXPECT_EQ(AlertKindName(K::kStalled), "stalled");
}

TEST(AlertTextTest, FormatUtc) {
  EXPECT_EQ(FormatUtc(At("2026-11-30T14:05:31.999Z")), "2026-11-30 14:05:31 UTC");
}

TEST(AlertTextTest, DeliveriesFailed) {
  Alert a = Make(K::kDeliveriesFailed, "404 Not Found is not retried");
  a.count = 37;
  a.sample_reasons = {"410 Gone is not retried", "404 Not Found is not retried"};
  EXPECT_EQ(AlertSubject(a), "[hookrelay] billing: 37 deliveries failed");
  std::string body = AlertBody(a, minutes(5));
  EXPECT_THAT(body, HasSubstr("37 deliveries to billing failed permanently in the last 5m "
                              "(since 2026-11-30 14:00:31 UTC).\n"));
  EXPECT_THAT(body, HasSubstr("Last reason: 404 Not Found is not retried.\n"));
  EXPECT_THAT(body, HasSubstr("  - 410 Gone is not retried\n"));
  EXPECT_THAT(body, HasSubstr("Fix the endpoint, then replay them: "
                              "hookrelay replay --status failed --destination billing\n"));
}

TEST(AlertTextTest, OneDeliveryFailed) {
  Alert a = Make(K::kDeliveriesFailed, "deadline passed (1h after the first failure).");
  EXPECT_EQ(AlertSubject(a), "[hookrelay] billing: 1 delivery failed");
  std::string body = AlertBody(a, minutes(5));
  EXPECT_THAT(body,
              HasSubstr("1 delivery to billing failed permanently at 2026-11-30 14:00:31 UTC.\n"));
  EXPECT_THAT(body, HasSubstr("Last reason: deadline passed (1h after the first failure).\n"));
  EXPECT_THAT(body, Not(HasSubstr("Reasons seen")));
  EXPECT_THAT(body, HasSubstr("replay it: hookrelay replay --status failed --destination billing"));
}

TEST(AlertTextTest, BreakerOpened) {
  Alert a = Make(K::kBreakerOpened, "20 consecutive failures (last: 503 Service Unavailable)");
  a.until = At("2026-11-30T14:05:31Z");
  EXPECT_EQ(AlertSubject(a), "[hookrelay] billing: circuit breaker opened");
  std::string body = AlertBody(a, minutes(5));
  EXPECT_THAT(body, HasSubstr("The circuit breaker for destination billing opened at "
                              "2026-11-30 14:00:31 UTC after 20 consecutive failures (last: 503 "
                              "Service Unavailable).\n"));
  EXPECT_THAT(body, HasSubstr("No requests will be sent to billing until 14:05:31 UTC; "
                              "deliveries wait as paused and spend no attempts."));
  EXPECT_THAT(body, HasSubstr("POST /api/v1/destinations/billing/reset-breaker"));
}

TEST(AlertTextTest, BreakerOpenedUntilAnotherDayAndRepeated) {
  Alert a = Make(K::kBreakerOpened, "20 consecutive failures");
  a.until = At("2026-12-01T14:00:31Z");
  a.count = 3;
  EXPECT_EQ(AlertSubject(a), "[hookrelay] billing: circuit breaker opened (3 times)");
  std::string body = AlertBody(a, minutes(5));
  EXPECT_THAT(body, HasSubstr("opened 3 times in the last 5m; the latest at 2026-11-30 14:00:31 "
                              "UTC after 20 consecutive failures."));
  EXPECT_THAT(body, HasSubstr("until 2026-12-01 14:00:31 UTC;"));

  Alert no_until = Make(K::kBreakerOpened);
  EXPECT_THAT(AlertBody(no_until, minutes(5)), HasSubstr("until the breaker closes;"));
  EXPECT_THAT(AlertBody(no_until, minutes(5)), HasSubstr("opened at 2026-11-30 14:00:31 UTC.\n"));
}

TEST(AlertTextTest, OtherKinds) {
  std::string closed =
      AlertBody(Make(K::kBreakerClosed, "the probe request succeeded"), minutes(5));
  EXPECT_THAT(closed, HasSubstr("closed at 2026-11-30 14:00:31 UTC: the probe request succeeded."));
  EXPECT_THAT(closed, HasSubstr("ramps up"));

  Alert flapping = Make(K::kBreakerClosed);
  flapping.count = 2;
  EXPECT_THAT(AlertBody(flapping, minutes(5)), HasSubstr("flapping"));

  std::string paused = AlertBody(Make(K::kDestinationPaused, "410 Gone"), minutes(5));
  EXPECT_THAT(paused, HasSubstr("Destination billing was paused at 2026-11-30 14:00:31 UTC: 410 "
                                "Gone."));
  EXPECT_THAT(paused, HasSubstr("POST /api/v1/destinations/billing/resume"));
  EXPECT_EQ(AlertSubject(Make(K::kDestinationPaused)), "[hookrelay] billing: destination paused");

  std::string resumed =
      AlertBody(Make(K::kDestinationResumed, "resumed by an operator"), minutes(5));
  EXPECT_THAT(resumed,
              HasSubstr("was resumed at 2026-11-30 14:00:31 UTC: resumed by an operator."));
  EXPECT_EQ(AlertSubject(Make(K::kDestinationResumed)), "[hookrelay] billing: destination resumed");

  std::string stalled =
      AlertBody(Make(K::kStalled, "no delivery completed in 10m while 500 are due"), minutes(5));
  EXPECT_THAT(stalled, HasSubstr("Deliveries to billing are stalled"));
  EXPECT_THAT(stalled, HasSubstr("no delivery completed in 10m while 500 are due."));
  EXPECT_EQ(AlertSubject(Make(K::kStalled)), "[hookrelay] billing: deliveries stalled");
}

TEST(AlertTextTest, EveryBodyEndsWithANewline) {
  for (K kind : {K::kBreakerOpened, K::kBreakerClosed, K::kDeliveriesFailed, K::kDestinationPaused,
                 K::kDestinationResumed, K::kStalled}) {
    std::string body = AlertBody(Make(kind, "why"), minutes(5));
    ASSERT_FALSE(body.empty());
    EXPECT_EQ(body.back(), '\n');
    EXPECT_THAT(body, HasSubstr("billing"));
    EXPECT_THAT(body, Not(HasSubstr("..")));
  }
}

TEST(AlertTextTest, Json) {
  Alert a = Make(K::kBreakerOpened, "20 consecutive failures");
  a.until = At("2026-11-30T14:05:31Z");
  json::object o = AlertToJson(a, minutes(5));
  EXPECT_EQ(o.at("kind"), "breaker_opened");
  EXPECT_EQ(o.at("destination"), "billing");
  EXPECT_EQ(o.at("at"), "2026-11-30T14:00:31.000Z");
  EXPECT_EQ(o.at("reason"), "20 consecutive failures");
  EXPECT_EQ(o.at("count"), 1);
  EXPECT_EQ(o.at("until"), "2026-11-30T14:05:31.000Z");
  EXPECT_EQ(o.at("subject").as_string(), AlertSubject(a));
  EXPECT_EQ(o.at("text").as_string(), AlertBody(a, minutes(5)));
  EXPECT_TRUE(o.at("sample_reasons").as_array().empty());

  Alert f = Make(K::kDeliveriesFailed, "x");
  f.count = 12;
  f.sample_reasons = {"x"};
  json::object fo = AlertToJson(f, minutes(5));
  EXPECT_EQ(fo.at("kind"), "deliveries_failed");
  EXPECT_EQ(fo.at("count"), 12);
  EXPECT_TRUE(fo.at("until").is_null());
  EXPECT_EQ(fo.at("sample_reasons"), (json::array{"x"}));
}

}  // namespace
}  // namespace hookrelay::alerts
