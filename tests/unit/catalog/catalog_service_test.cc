#include "catalog/catalog_service.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "store/sqlite/sqlite_store.h"
#include "support/fault_injecting_store.h"
#include "support/process.h"

namespace hookrelay::catalog {
namespace {

namespace json = boost::json;
using store::CatalogKind;

constexpr char kSecret[] = "whsec_c2lnbmluZy1rZXktMDEyMzQ1Njc4OQ==";

// A real SQLite store behind the fault injector, and a service over it.
class CatalogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    service_.reset();
    faults_.reset();
    auto s = store::OpenSqliteStore({.dir = dir_.path()}, clock_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    faults_ = std::make_unique<store::FaultInjectingStore>(std::move(*s));
    registry_ = std::make_unique<model::Registry>();
    service_ =
        std::make_unique<CatalogService>(*faults_, *registry_, clock_, [this] { ++changes_; });
  }

  std::vector<std::string> Load(std::optional<std::vector<store::CatalogObject>> config) {
    auto notes = service_->Load(config);
    EXPECT_TRUE(notes.ok()) << notes.status().ToString();
    return notes.ok() ? *notes : std::vector<std::string>{};
  }

  static store::CatalogObject ConfigSource(std::string name) {
    store::CatalogObject o;
    o.kind = CatalogKind::kSource;
    o.name = name;
    o.spec = R"({"name":")" + name + "\"}";
    o.origin = "config";
    return o;
  }

  Status Create(CatalogKind kind, std::string_view body) {
    auto r = service_->Create(kind, json::parse(body), "token:test");
    return r.ok() ? Status::Ok() : r.status();
  }

  std::vector<store::AuditEntry> Audit() {
    auto page = faults_->ListAudit("", 100);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->items : std::vector<store::AuditEntry>{};
  }

  hookrelay::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::FaultInjectingStore> faults_;
  std::unique_ptr<model::Registry> registry_;
  std::unique_ptr<CatalogService> service_;
  int changes_ = 0;
};

TEST_F(CatalogServiceTest, CreatedObjectsGoLiveAndSurviveARestart) {
  Load(std::nullopt);
  ASSERT_TRUE(Create(CatalogKind::kSource, R"({"name": "shop"})").ok());
  ASSERT_TRUE(Create(CatalogKind::kDestination,
                     std::string(R"({"name": "billing", "url": "https://b.example/h",
                                     "signing_secret": ")") +
                         kSecret + "\"}")
                  .ok());
  ASSERT_TRUE(Create(CatalogKind::kRoute, R"({"source": "shop", "destination": "billing"})").ok());
  EXPECT_EQ(changes_, 3);
  auto live = registry_->Get();
  ASSERT_NE(live->FindSource("shop"), nullptr);
  EXPECT_EQ(live->FindSource("shop")->origin, "api");
  ASSERT_EQ(live->DestinationsOf("shop").size(), 1u);
  EXPECT_EQ(live->DestinationsOf("shop")[0]->signing_secret, kSecret);

  Open();  // a restart, without a config file
  Load(std::nullopt);
  live = registry_->Get();
  ASSERT_EQ(live->DestinationsOf("shop").size(), 1u);
  EXPECT_EQ(live->DestinationsOf("shop")[0]->name, "billing");
  // The secret survives (it is needed to sign) but the audit trail never shows it.
  EXPECT_EQ(live->FindDestination("billing")->signing_secret, kSecret);
  std::vector<store::AuditEntry> audit = Audit();
  ASSERT_EQ(audit.size(), 3u);
  for (const store::AuditEntry& e : audit) {
    EXPECT_EQ(e.action, "config_change");
    EXPECT_EQ(e.actor, "token:test");
    EXPECT_EQ(e.detail.find(kSecret), std::string::npos);
  }
  EXPECT_EQ(audit[0].target, "route shop:billing");
  EXPECT_EQ(json::parse(audit[0].detail).at("op").as_string(), "create");
}

TEST_F(CatalogServiceTest, BadObjectsAreRefusedNamingTheField) {
  Load(std::nullopt);
  struct Case {
    CatalogKind kind;
    const char* body;
    Status::Code code;
    const char* field;
  };
  ASSERT_TRUE(Create(CatalogKind::kSource, R"({"name": "shop"})").ok());
  ASSERT_TRUE(
      Create(CatalogKind::kDestination, R"({"name": "d", "url": "https://d.example"})").ok());
  ASSERT_TRUE(Create(CatalogKind::kRoute, R"({"source": "shop", "destination": "d"})").ok());
  for (const Case& c : std::vector<Case>{
           {CatalogKind::kSource, R"({})", Status::Code::kInvalidArgument, "name"},
           {CatalogKind::kSource, R"({"name": 7})", Status::Code::kInvalidArgument, "name"},
           {CatalogKind::kSource, R"({"name": "a b"})", Status::Code::kInvalidArgument, "name"},
           {CatalogKind::kSource, R"({"name": "x", "colour": "red"})",
            Status::Code::kInvalidArgument, "colour"},
           {CatalogKind::kSource,
            R"({"name": "x", "verify": {"scheme": "nope", "secrets": ["s"]}})",
            Status::Code::kInvalidArgument, "verify.scheme"},
           {CatalogKind::kSource, R"({"name": "x", "max_body": "lots"})",
            Status::Code::kInvalidArgument, "max_body"},
           {CatalogKind::kSource, R"({"name": "shop"})", Status::Code::kAlreadyExists, ""},
           {CatalogKind::kDestination, R"({"name": "x"})", Status::Code::kInvalidArgument, "url"},
           {CatalogKind::kDestination, R"({"name": "x", "url": "ftp://x"})",
            Status::Code::kInvalidArgument, "url"},
           {CatalogKind::kDestination,
            R"({"name": "x", "url": "https://x", "replay_window": "3 days"})",
            Status::Code::kInvalidArgument, "replay_window"},
           {CatalogKind::kDestination,
            R"({"name": "x", "url": "https://x", "max_concurrency": "8"})",
            Status::Code::kInvalidArgument, "max_concurrency"},
           {CatalogKind::kDestination, R"({"name": "x", "url": "https://x", "policy": "nope"})",
            Status::Code::kInvalidArgument, "policy.preset"},
           {CatalogKind::kRoute, R"({"source": "shop"})", Status::Code::kInvalidArgument,
            "destination"},
           {CatalogKind::kRoute, R"({"source": "nope", "destination": "d"})",
            Status::Code::kInvalidArgument, "source"},
           {CatalogKind::kRoute, R"({"source": "shop", "destination": "nope"})",
            Status::Code::kInvalidArgument, "destination"},
           {CatalogKind::kRoute, R"({"source": "shop", "destination": "d", "id": "other"})",
            Status::Code::kAlreadyExists, ""},
           {CatalogKind::kRoute, R"([1])", Status::Code::kInvalidArgument, ""},
       }) {
    Status s = Create(c.kind, c.body);
    EXPECT_EQ(s.code(), c.code) << c.body << ": " << s.ToString();
    EXPECT_EQ(s.field(), c.field) << c.body << ": " << s.ToString();
  }
  EXPECT_EQ(Audit().size(), 3u);  // nothing refused was written
}

TEST_F(CatalogServiceTest, UpdateMergesKeepsSecretsAndRefusesRenames) {
  Load(std::nullopt);
  ASSERT_TRUE(Create(CatalogKind::kDestination,
                     std::string(R"({"name": "billing", "url": "https://b.example/h",
                                     "headers": {"Authorization": "Bearer t", "X-Env": "prod"},
                                     "max_concurrency": 4, "signing_secret": ")") +
                         kSecret + "\"}")
                  .ok());
  ASSERT_TRUE(service_
                  ->Update(CatalogKind::kDestination, "billing",
                           json::parse(R"({"url": "https://new.example/h",
                                           "headers": {"X-Env": "staging"},
                                           "max_concurrency": null})"),
                           "token:test")
                  .ok());
  const model::Destination* d = registry_->Get()->FindDestination("billing");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->url, "https://new.example/h");
  EXPECT_EQ(d->max_concurrency, 16);  // null resets to the default
  EXPECT_EQ(d->signing_secret, kSecret);
  EXPECT_EQ(d->headers, (std::vector<std::pair<std::string, std::string>>{
                            {"Authorization", "Bearer t"}, {"X-Env", "staging"}}));
  json::value detail = json::parse(Audit()[0].detail);
  EXPECT_EQ(detail.at("op").as_string(), "update");
  EXPECT_EQ(detail.at("fields").as_array().size(), 3u);
  EXPECT_EQ(Audit()[0].detail.find("new.example"), std::string::npos);

  Status rename = service_->Update(CatalogKind::kDestination, "billing",
                                   json::parse(R"({"name": "other"})"), "t");
  EXPECT_EQ(rename.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(rename.field(), "name");
  Status bad = service_->Update(CatalogKind::kDestination, "billing",
                                json::parse(R"({"url": "nope"})"), "t");
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(bad.field(), "url");
  EXPECT_EQ(registry_->Get()->FindDestination("billing")->url, "https://new.example/h");
  EXPECT_EQ(service_->Update(CatalogKind::kDestination, "nope", json::parse("{}"), "t").code(),
            Status::Code::kNotFound);
  EXPECT_EQ(service_->Update(CatalogKind::kDestination, "billing", json::parse("[]"), "t").code(),
            Status::Code::kInvalidArgument);
}

TEST_F(CatalogServiceTest, ConfigFileObjectsCannotBeChangedThroughTheApi) {
  Load(std::vector<store::CatalogObject>{ConfigSource("github")});
  Status update =
      service_->Update(CatalogKind::kSource, "github", json::parse(R"({"max_body": "1MiB"})"), "t");
  EXPECT_EQ(update.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(update.message().find("config file"), std::string::npos);
  EXPECT_EQ(service_->Remove(CatalogKind::kSource, "github", "t").code(),
            Status::Code::kFailedPrecondition);
  EXPECT_EQ(Create(CatalogKind::kSource, R"({"name": "github"})").code(),
            Status::Code::kAlreadyExists);
  // The start that seeded it is in the audit trail, once; an unchanged restart adds nothing.
  ASSERT_EQ(Audit().size(), 1u);
  EXPECT_EQ(Audit()[0].actor, "config");
  Open();
  Load(std::vector<store::CatalogObject>{ConfigSource("github")});
  EXPECT_EQ(Audit().size(), 1u);
  // Removed from the file: gone at the next start.
  Open();
  Load(std::vector<store::CatalogObject>{ConfigSource("stripe")});
  EXPECT_EQ(registry_->Get()->FindSource("github"), nullptr);
  EXPECT_NE(registry_->Get()->FindSource("stripe"), nullptr);
}

TEST_F(CatalogServiceTest, RemoveRefusesWhatIsStillInUse) {
  Load(std::nullopt);
  ASSERT_TRUE(Create(CatalogKind::kSource, R"({"name": "shop"})").ok());
  ASSERT_TRUE(
      Create(CatalogKind::kDestination, R"({"name": "d", "url": "https://d.example"})").ok());
  ASSERT_TRUE(Create(CatalogKind::kRoute, R"({"source": "shop", "destination": "d"})").ok());
  Status routed = service_->Remove(CatalogKind::kSource, "shop", "t");
  EXPECT_EQ(routed.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(routed.message().find("\"shop:d\""), std::string::npos) << routed.ToString();
  EXPECT_EQ(service_->Remove(CatalogKind::kDestination, "d", "t").code(),
            Status::Code::kFailedPrecondition);

  // An event routed to d: its delivery is not final, so d cannot go.
  store::NewEvent e;
  e.source = "shop";
  e.received_at = clock_.Now();
  e.deliveries.push_back({.destination = "d", .max_attempts = 3, .next_attempt_at = clock_.Now()});
  ASSERT_TRUE(faults_->AppendEventSync(e).ok());
  ASSERT_TRUE(service_->Remove(CatalogKind::kRoute, "shop:d", "t").ok());
  Status pending = service_->Remove(CatalogKind::kDestination, "d", "t");
  EXPECT_EQ(pending.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(pending.message().find("1 deliveries"), std::string::npos) << pending.ToString();
  EXPECT_NE(registry_->Get()->FindDestination("d"), nullptr);

  ASSERT_TRUE(service_->Remove(CatalogKind::kSource, "shop", "t").ok());
  EXPECT_EQ(registry_->Get()->FindSource("shop"), nullptr);
  EXPECT_EQ(service_->Remove(CatalogKind::kSource, "shop", "t").code(), Status::Code::kNotFound);
  Open();
  Load(std::nullopt);
  EXPECT_EQ(registry_->Get()->FindSource("shop"), nullptr);
  EXPECT_TRUE(registry_->Get()->routes.empty());
}

TEST_F(CatalogServiceTest, AStoreFailureLeavesTheLiveCatalogAsItWas) {
  Load(std::nullopt);
  ASSERT_TRUE(Create(CatalogKind::kSource, R"({"name": "shop"})").ok());
  faults_->FailCatalogChanges(3, Status::ResourceExhausted("disk full"));
  EXPECT_EQ(Create(CatalogKind::kSource, R"({"name": "other"})").code(),
            Status::Code::kResourceExhausted);
  EXPECT_EQ(
      service_->Update(CatalogKind::kSource, "shop", json::parse(R"({"max_body": "1KiB"})"), "t")
          .code(),
      Status::Code::kResourceExhausted);
  EXPECT_EQ(service_->Remove(CatalogKind::kSource, "shop", "t").code(),
            Status::Code::kResourceExhausted);
  auto live = registry_->Get();
  EXPECT_EQ(live->FindSource("other"), nullptr);
  ASSERT_NE(live->FindSource("shop"), nullptr);
  EXPECT_EQ(live->FindSource("shop")->max_body, model::kDefaultMaxBody);
  EXPECT_EQ(changes_, 1);
  // Healed: the same changes work.
  EXPECT_TRUE(Create(CatalogKind::kSource, R"({"name": "other"})").ok());
  EXPECT_TRUE(service_->Remove(CatalogKind::kSource, "shop", "t").ok());
}

}  // namespace
}  // namespace hookrelay::catalog
