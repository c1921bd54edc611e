#include "catalog/catalog_plan.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace hookrelay::catalog {
namespace {

namespace json = boost::json;
using store::CatalogKind;
using store::CatalogObject;

CatalogObject Obj(CatalogKind kind, std::string name, std::string spec, std::string origin) {
  return {
      .kind = kind, .name = std::move(name), .spec = std::move(spec), .origin = std::move(origin)};
}

CatalogObject Source(std::string name, std::string origin, std::string extra = "") {
  return Obj(CatalogKind::kSource, name, R"({"name":")" + name + "\"" + extra + "}", origin);
}
CatalogObject Dest(std::string name, std::string origin, std::string url = "https://x.example/h") {
  return Obj(CatalogKind::kDestination, name, R"({"name":")" + name + R"(","url":")" + url + "\"}",
             origin);
}
CatalogObject Route(std::string source, std::string dest, std::string origin) {
  return Obj(CatalogKind::kRoute, source + ":" + dest,
             R"({"source":")" + source + R"(","destination":")" + dest + "\"}", origin);
}

std::vector<std::string> Names(const std::vector<CatalogObject>& objects) {
  std::vector<std::string> out;
  for (const CatalogObject& o : objects) {
    out.push_back(std::string(store::CatalogKindName(o.kind)) + ":" + o.name + ":" + o.origin);
  }
  return out;
}

TEST(MergePatchTest, FollowsRfc7396) {
  // The examples of RFC 7396, appendix A (a selection).
  struct Case {
    const char* target;
    const char* patch;
    const char* result;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
           {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
           {R"({"a":"b"})", R"({"a":null})", R"({})"},
           {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
           {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
           {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
           {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
           {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
           {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
           {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
           {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
           {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
           {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
       }) {
    EXPECT_EQ(MergePatch(json::parse(c.target), json::parse(c.patch)), json::parse(c.result))
        << c.target << " + " << c.patch;
  }
}

TEST(BuildCatalogTest, ParsesEveryObjectCarriesOriginAndValidatesRoutes) {
  auto c = BuildCatalog(
      {Source("github", "config"), Dest("billing", "api"), Route("github", "billing", "api")});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sources.at("github").origin, "config");
  EXPECT_EQ(c->destinations.at("billing").origin, "api");
  ASSERT_EQ(c->routes.size(), 1u);
  EXPECT_EQ(c->routes[0].id, "github:billing");
  EXPECT_EQ(c->routes[0].origin, "api");

  auto bad = BuildCatalog({Dest("billing", "api", "ftp://x")});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stored destination \"billing\": url:"), std::string::npos)
      << bad.status().ToString();
  auto dangling = BuildCatalog({Source("github", "api"), Route("github", "nope", "api")});
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.status().message().find("unknown destination \"nope\""), std::string::npos);
  auto garbage = BuildCatalog({Obj(CatalogKind::kSource, "x", "{not json", "api")});
  EXPECT_FALSE(garbage.ok());
}

// A destination stored before its `headers` could not name framing, hop-by-hop or webhook-*
// headers still loads, without them: an upgrade must not keep the server from starting.
TEST(BuildCatalogTest, StoredDestinationWithHeadersNowRefusedLoadsWithoutThem) {
  auto c = BuildCatalog({Obj(CatalogKind::kDestination, "old",
                             R"({"name":"old","url":"https://x.example/h","headers":)"
                             R"({"Content-Length":"3","webhook-id":"forged","X-Env":"prod"}})",
                             "api")});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& headers = c->destinations.at("old").headers;
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].first, "X-Env");
}

TEST(PlanSeedTest, FirstStartWritesTheConfigFile) {
  SeedPlan p =
      PlanSeed({}, std::vector<CatalogObject>{Source("github", "config"), Dest("billing", "config"),
                                              Route("github", "billing", "config")});
  EXPECT_EQ(p.change.put.size(), 3u);
  EXPECT_TRUE(p.change.remove.empty());
  EXPECT_EQ(p.added.size(), 3u);
  EXPECT_EQ(Names(p.objects),
            (std::vector<std::string>{"source:github:config", "destination:billing:config",
                                      "route:github:billing:config"}));
}

TEST(PlanSeedTest, AnUnchangedConfigFileChangesNothing) {
  std::vector<CatalogObject> config = {Source("github", "config"), Dest("billing", "config")};
  std::vector<CatalogObject> stored = config;
  stored.push_back(Dest("crm", "api"));
  SeedPlan p = PlanSeed(stored, config);
  EXPECT_TRUE(p.change.put.empty());
  EXPECT_TRUE(p.change.remove.empty());
  EXPECT_TRUE(p.notes.empty());
  EXPECT_EQ(Names(p.objects), Names(stored));
}

TEST(PlanSeedTest, TheConfigFileWinsForWhatItDefinesAndApiObjectsStay) {
  std::vector<CatalogObject> stored = {Source("github", "config"),   Dest("billing", "config"),
                                       Dest("old", "config"),        Dest("crm", "api"),
                                       Dest("shared", "api"),        Route("github", "crm", "api"),
                                       Route("github", "old", "api")};
  std::vector<CatalogObject> config = {Source("github", "config"),
                                       Dest("billing", "config", "https://new.example/h"),
                                       Dest("shared", "config"), Source("stripe", "config")};
  SeedPlan p = PlanSeed(stored, config);
  // billing changed in the file; shared now defined by the file (replacing the API's one);
  // old left the file, and the API route to it goes with it; stripe is new.
  EXPECT_EQ(p.updated,
            (std::vector<std::string>{"destination \"billing\"", "destination \"shared\""}));
  EXPECT_EQ(p.added, (std::vector<std::string>{"source \"stripe\""}));
  EXPECT_EQ(p.removed, (std::vector<std::string>{"destination \"old\"", "route \"github:old\""}));
  EXPECT_EQ(Names(p.objects),
            (std::vector<std::string>{"source:github:config", "destination:billing:config",
                                      "destination:crm:api", "destination:shared:config",
                                      "route:github:crm:api", "source:stripe:config"}));
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_NE(p.notes[0].find("replaces the one created through the API"), std::string::npos);
  EXPECT_NE(p.notes[1].find("route \"github:old\""), std::string::npos);
  EXPECT_EQ(p.change.put.size(), 3u);
  EXPECT_EQ(p.change.remove.size(), 2u);
  EXPECT_TRUE(BuildCatalog(p.objects).ok());
}

TEST(PlanSeedTest, NoConfigFileKeepsEverythingStored) {
  std::vector<CatalogObject> stored = {Source("github", "config"), Dest("billing", "config"),
                                       Route("github", "billing", "api")};
  SeedPlan p = PlanSeed(stored, std::nullopt);
  EXPECT_TRUE(p.change.put.empty());
  EXPECT_TRUE(p.change.remove.empty());
  EXPECT_EQ(Names(p.objects), Names(stored));
  // An empty config file is a config file: it removes what the file used to define.
  SeedPlan emptied = PlanSeed(stored, std::vector<CatalogObject>{});
  EXPECT_EQ(emptied.removed.size(), 3u);
  EXPECT_TRUE(emptied.objects.empty());
}

}  // namespace
}  // namespace hookrelay::catalog
