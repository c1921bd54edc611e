// A token's scope (issue 28): parsing with errors that name the field, the text the store keeps,
// the catalog a scoped token sees, and a row whose scope cannot be read granting nothing.
#include "access/scope.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "access/token_registry.h"
#include "common/crypto.h"

namespace hookrelay::access {
namespace {

namespace json = boost::json;

TEST(ScopeTest, ParsesNamesAndSaysWhichFieldIsWrong) {
  auto s = ParseScope(json::parse(R"({"sources": ["b", "a"], "destinations": ["d"]})"), "scope");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->sources, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(ScopeToText(*s), R"({"sources":["a","b"],"destinations":["d"]})");
  auto only = ParseScope(json::parse(R"({"destinations": ["d"]})"), "scope");
  ASSERT_TRUE(only.ok());
  EXPECT_TRUE(only->sources.empty());

  const std::pair<std::string, std::string> bad[] = {
      {R"([])", "scope"},
      {R"({})", "scope"},
      {R"({"sources": [], "destinations": []})", "scope"},
      {R"({"sources": "a"})", "scope.sources"},
      {R"({"sources": [""]})", "scope.sources[0]"},
      {R"({"destinations": ["a", null]})", "scope.destinations[1]"},
      {R"({"everything": true})", "scope.everything"},
  };
  for (const auto& [text, field] : bad) {
    auto r = ParseScope(json::parse(text), "scope");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().field(), field) << text << ": " << r.status().ToString();
    EXPECT_EQ(r.status().message().rfind(field + ":", 0), 0u) << r.status().message();
  }
  json::array many;
  for (size_t i = 0; i <= kMaxScopeNames; ++i) many.emplace_back("n" + std::to_string(i));
  EXPECT_FALSE(ParseScope(json::object{{"sources", many}}, "scope").ok());
}

TEST(ScopeTest, TheStoresTextRoundTripsAndEmptyMeansNoScope) {
  auto none = ScopeFromText("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Scope s{{"a"}, {"d", "e"}};
  auto back = ScopeFromText(ScopeToText(s));
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ(**back, s);
  EXPECT_FALSE(ScopeFromText("{not json").ok());
  EXPECT_FALSE(ScopeFromText("{}").ok());
}

TEST(ScopeTest, TheVisibleCatalogHoldsWhatTheScopeReachesAndRoutesWithBothEnds) {
  model::Catalog c;
  for (const char* n : {"github", "stripe"}) c.sources[n].name = n;
  for (const char* n : {"billing", "crm"}) c.destinations[n].name = n;
  c.routes.push_back({"github:billing", "github", "billing"});
  c.routes.push_back({"stripe:billing", "stripe", "billing"});
  c.routes.push_back({"stripe:crm", "stripe", "crm"});
  const model::Catalog v = VisibleCatalog(c, Scope{{"stripe"}, {"billing"}});
  EXPECT_EQ(v.sources.size(), 1u);
  EXPECT_TRUE(v.FindSource("stripe"));
  EXPECT_EQ(v.destinations.size(), 1u);
  EXPECT_TRUE(v.FindDestination("billing"));
  ASSERT_EQ(v.routes.size(), 1u);
  EXPECT_EQ(v.routes[0].id, "stripe:billing");
}

TEST(ScopeTest, ATokenRowWhoseScopeCannotBeReadGrantsNothing) {
  FakeClock clock;
  TokenRegistry registry("", clock);
  store::ApiToken good{.name = "good",
                       .hash = HexEncode(Sha256("hr_good")),
                       .role = "viewer",
                       .scope = R"({"sources":["a"]})"};
  store::ApiToken bad{.name = "bad",
                      .hash = HexEncode(Sha256("hr_bad")),
                      .role = "admin",
                      .scope = R"({"sources":"a"})"};
  registry.Replace({good, bad});
  auto g = registry.Authenticate("Bearer hr_good");
  ASSERT_TRUE(g.principal);
  ASSERT_TRUE(g.principal->scope);
  EXPECT_EQ(g.principal->scope->sources, std::set<std::string>{"a"});
  EXPECT_FALSE(registry.Authenticate("Bearer hr_bad").principal)
      << "a scope that cannot be read must not reach everything";
}

}  // namespace
}  // namespace hookrelay::access
