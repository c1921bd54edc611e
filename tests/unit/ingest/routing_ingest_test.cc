// Issue 27: what ingest does with routes' types and filters (BuildEvent), and the bounded
// per-type counts of /metrics (TypeCounts). Pure: no store, no network.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "ingest/ingest_service.h"
#include "ingest/type_counts.h"
#include "model/registry.h"

namespace hookrelay::ingest {
namespace {

model::Route RouteOf(const std::string& json) {
  auto r = model::ParseRoute(boost::json::parse(json));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : model::Route{};
}

model::Catalog Stripe() {
  model::Catalog c;
  auto s = model::ParseSource(boost::json::parse(
      R"({"name": "stripe", "verify": {"scheme": "stripe", "secrets": ["whsec_x"]}})"));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  c.sources["stripe"] = *s;
  for (const char* name : {"billing", "crm", "all"}) {
    model::Destination d;
    d.name = name;
    d.url = std::string("http://") + name + ".example/";
    c.destinations[name] = d;
  }
  c.routes.push_back(
      RouteOf(R"({"source": "stripe", "destination": "billing", "types": ["invoice.*"]})"));
  c.routes.push_back(RouteOf(R"({"source": "stripe", "destination": "crm",
      "types": ["customer.*"], "filter": {"body": {"livemode": true},
      "headers": {"x-env": {"$in": ["prod", "live"]}}}})"));
  c.routes.push_back(RouteOf(R"({"source": "stripe", "destination": "all"})"));
  return c;
}

http::Request Post(std::string body, http::HeaderList headers = {}) {
  http::Request r;
  r.method = "POST";
  r.headers = std::move(headers);
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

std::vector<std::string> Destinations(const store::NewEvent& e) {
  std::vector<std::string> out;
  for (const store::NewDelivery& d : e.deliveries) out.push_back(d.destination);
  return out;
}

TEST(RoutingIngestTest, OnlyTheRoutesThatTakeAnEventGetADelivery) {
  const model::Catalog c = Stripe();
  store::NewEvent e =
      BuildEvent(c, c.sources.at("stripe"), Post(R"({"type": "invoice.paid"})"), TimePoint{});
  EXPECT_EQ(e.type, "invoice.paid");
  EXPECT_TRUE(e.routed);
  EXPECT_EQ(Destinations(e), (std::vector<std::string>{"billing", "all"}));
  ASSERT_EQ(e.route_misses.size(), 1u);
  EXPECT_EQ(e.route_misses[0].route, "stripe:crm");
  EXPECT_EQ(e.route_misses[0].destination, "crm");
  EXPECT_EQ(e.route_misses[0].reason, "type invoice.paid is not in [customer.*]");

  // Header names match whatever their case; the body's field decides.
  e = BuildEvent(c, c.sources.at("stripe"),
                 Post(R"({"type": "customer.created", "livemode": true})", {{"X-ENV", "live"}}),
                 TimePoint{});
  EXPECT_EQ(Destinations(e), (std::vector<std::string>{"crm", "all"}));
  e = BuildEvent(c, c.sources.at("stripe"),
                 Post(R"({"type": "customer.created", "livemode": false})", {{"x-env", "live"}}),
                 TimePoint{});
  EXPECT_EQ(Destinations(e), (std::vector<std::string>{"all"}));
  ASSERT_EQ(e.route_misses.size(), 2u);
  EXPECT_EQ(e.route_misses[1].reason, "body.livemode: expected true, got false");
}

TEST(RoutingIngestTest, AnEventNoRouteTakesIsKeptUnrouted) {
  model::Catalog c = Stripe();
  c.routes.pop_back();  // no catch-all
  store::NewEvent e = BuildEvent(c, c.sources.at("stripe"), Post("not json at all"), TimePoint{});
  EXPECT_FALSE(e.type.has_value());
  EXPECT_FALSE(e.routed);
  EXPECT_TRUE(e.deliveries.empty());
  ASSERT_EQ(e.route_misses.size(), 2u);
  EXPECT_EQ(e.route_misses[0].reason, "the event has no type; the route wants [invoice.*]");
  EXPECT_EQ(e.body, "not json at all");  // stored as received all the same
}

TEST(RoutingIngestTest, ASourceTypeRuleReplacesItsSchemes) {
  model::Catalog c = Stripe();
  auto s = model::ParseSource(
      boost::json::parse(R"({"name": "stripe", "type": {"header": "X-Event"}})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  c.sources["stripe"] = *s;
  store::NewEvent e =
      BuildEvent(c, c.sources.at("stripe"),
                 Post(R"({"type": "customer.x"})", {{"x-event", "invoice.sent"}}), TimePoint{});
  EXPECT_EQ(e.type, "invoice.sent");
  EXPECT_EQ(Destinations(e), (std::vector<std::string>{"billing", "all"}));
  auto bad = model::ParseSource(boost::json::parse(R"({"name": "s", "type": {"json": "a..b"}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "type.json");
}

TEST(RoutingIngestTest, ARouteWithABadFilterIsRefusedWithItsPath) {
  auto r = model::ParseRoute(boost::json::parse(
      R"({"source": "s", "destination": "d", "filter": {"body": {"amount": {"$gt": true}}}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "filter.body.amount.$gt");
  r = model::ParseRoute(
      boost::json::parse(R"({"source": "s", "destination": "d", "types": ["a", "*.paid"]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "types[1]");
}

TEST(TypeCountsTest, CountsBySourceAndTypeAndBoundsTheTypes) {
  TypeCounts counts(3);
  counts.Add("s", std::string("a"));
  counts.Add("s", std::string("a"));
  counts.Add("s", std::nullopt);
  counts.Add("s", std::string("b"));
  counts.Add("s", std::string("c"));  // the fourth distinct: past the bound
  counts.Add("s", std::string("d"));
  counts.Add("s", std::string("a"));  // known ones still count as themselves
  counts.Add("t", std::string("c"));  // the bound is per source
  auto snap = counts.Snapshot();
  EXPECT_EQ(snap["s"]["a"], 3);
  EXPECT_EQ(snap["s"][""], 1);
  EXPECT_EQ(snap["s"]["b"], 1);
  EXPECT_EQ(snap["s"]["other"], 2);
  EXPECT_EQ(snap["s"].count("c"), 0u);
  EXPECT_EQ(snap["t"]["c"], 1);
}

}  // namespace
}  // namespace hookrelay::ingest
