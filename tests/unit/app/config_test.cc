#include "app/config.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "app/plane_filter.h"
#include "model/destination.h"
#include "support/process.h"
#include "support/tls_responder.h"

namespace hookrelay::app {
namespace {

const char* kGood = R"(
[server]
listen = "127.0.0.1:9090"
header_timeout = "5s"

[store]
dir = "/tmp/x"

[[sources]]
name = "github"
verify = { scheme = "github", secrets = ["s3cret"] }

[[sources]]
name = "plain"
max_body = "64KiB"
dedup = { json = "id" }

[[destinations]]
name = "billing"
url = "https://billing.example.com/hooks"
policy = "pro"
signing_secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
headers = { X-Env = "prod" }

[[destinations]]
name = "audit"
url = "http://audit.example.com/in"
policy = { strategy = "exponential", jitter = "full", base = "1s", cap = "60s", max_attempts = 5 }
rate_limit = "100/s"
breaker = { threshold = 5, open = ["1m", "5m"] }

[[routes]]
source = "github"
destination = "billing"

[[routes]]
source = "github"
destination = "audit"
)";

TEST(ConfigTest, ParsesAFullConfig) {
  auto c = ParseConfig(kGood, "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.listen, "127.0.0.1:9090");
  EXPECT_EQ(c->server.header_timeout, std::chrono::seconds(5));
  EXPECT_EQ(c->store.dir, "/tmp/x");
  ASSERT_EQ(c->catalog.sources.size(), 2u);
  const model::Source* gh = c->catalog.FindSource("github");
  ASSERT_NE(gh, nullptr);
  ASSERT_TRUE(gh->verify.has_value());
  EXPECT_EQ(gh->dedup.key, "X-GitHub-Delivery");  // the scheme's default
  EXPECT_EQ(c->catalog.FindSource("plain")->max_body, 64u * 1024);
  EXPECT_EQ(c->catalog.FindSource("plain")->dedup.kind, model::DedupRule::Kind::kJson);
  const model::Destination* billing = c->catalog.FindDestination("billing");
  ASSERT_NE(billing, nullptr);
  EXPECT_EQ(billing->policy.preset, "pro");
  EXPECT_EQ(billing->policy.max_attempts, 5);
  EXPECT_EQ(billing->headers.size(), 1u);
  const model::Destination* audit = c->catalog.FindDestination("audit");
  EXPECT_EQ(audit->policy.cap, std::chrono::seconds(60));
  EXPECT_DOUBLE_EQ(*audit->rate_limit, 100.0);
  EXPECT_EQ(audit->breaker.threshold, 5);
  EXPECT_EQ(c->catalog.DestinationsOf("github").size(), 2u);
  EXPECT_TRUE(c->catalog.DestinationsOf("plain").empty());
}

TEST(ConfigTest, EmptyConfigIsValid) {
  auto c = ParseConfig("", "empty.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.listen, "127.0.0.1:8080");
}

struct BadCase {
  const char* toml;
  const char* expected;  // substring of the message: "file:line: field: …"
};

class BadConfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfigTest, NamesFileLineAndField) {
  auto c = ParseConfig(GetParam().toml, "hookrelay.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(GetParam().expected), std::string::npos)
      << c.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadConfigTest,
    ::testing::Values(
        BadCase{"[server]\nlisten = 8080\n", "hookrelay.toml:2: server.listen: must be a string"},
        BadCase{"[server]\nbogus = 1\n", "hookrelay.toml:2: server.bogus: unknown field"},
        BadCase{"[nope]\n", "hookrelay.toml:1: nope: unknown field"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"ftp://x\"\n",
                "hookrelay.toml:3: destinations[0].url: must be http(s)"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\n"
                "policy = { base = \"1m\", cap = \"30s\" }\n",
                "hookrelay.toml:4: destinations[0].policy.cap"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\npolicy = \"gold\"\n",
                "destinations[0].policy"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\n"
                "signing_secret = \"nope\"\n",
                "hookrelay.toml:4: destinations[0].signing_secret: must start with \"whsec_\""},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://u:p@x\"\n",
                "destinations[0].url: must not carry credentials"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\nrate_limit = \"fast\"\n",
                "hookrelay.toml:4: destinations[0].rate_limit: invalid rate"},
        BadCase{"[[sources]]\nname = \"a\"\nmax_body = \"5XB\"\n",
                "hookrelay.toml:3: sources[0].max_body: size \"5XB\" has unknown unit"},
        BadCase{"[[sources]]\nname = \"a b\"\n", "hookrelay.toml:2: sources[0].name"},
        BadCase{"[[sources]]\nname = \"a\"\nverify = { scheme = \"magic\", secrets = [\"x\"] }\n",
                "sources[0].verify.scheme: unknown scheme"},
        BadCase{"[[sources]]\nname = \"a\"\nverify = { scheme = \"github\" }\n",
                "sources[0].verify.secrets"},
        BadCase{"[[sources]]\nname = \"a\"\n[[routes]]\nsource = \"a\"\ndestination = \"zz\"\n",
                "hookrelay.toml:5: routes[0].destination: unknown destination \"zz\""},
        BadCase{"[[sources]]\nname = \"a\"\n[[sources]]\nname = \"a\"\n",
                "hookrelay.toml:4: sources[1].name: duplicate source name"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\nordered = 1\n",
                "destinations[0].ordered"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\norder_key = { xml = \"a\" }\n",
                "destinations[0].order_key.xml: unknown order key \"xml\""},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\n"
                "order_key = { json = \"data..customer\" }\n",
                "destinations[0].order_key.json: must be a dotted path"},
        BadCase{"[[destinations]]\nname = \"a\"\nurl = \"http://x\"\nordered = false\n"
                "order_key = { header = \"X-Key\" }\n",
                "destinations[0].order_key: cannot be set with \"ordered\": false"},
        BadCase{"[alerts]\nsmtp_url = \"smtps://m.example.com\"\nfrom = \"a@example.com\"\n"
                "to = \"b@example.com\"\nca_file = \"/nonexistent/ca.pem\"\n",
                "hookrelay.toml:5: alerts.ca_file: cannot read /nonexistent/ca.pem: No such file "
                "or directory"},
        BadCase{"[alerts]\nsmtp_url = \"smtp://m.example.com\"\nfrom = \"a@example.com\"\n"
                "to = \"b@example.com\"\nusername = \"u\"\npassword = \"p\"\n",
                "alerts.starttls: SMTP credentials are only sent over TLS"},
        BadCase{"[server]\nmax_connections = 0\n", "hookrelay.toml:2: server.max_connections"},
        BadCase{"[server]\nmax_connections = 10\nmax_connections_per_client = 11\n",
                "hookrelay.toml:3: server.max_connections_per_client: must not exceed "
                "max_connections (10)"},
        BadCase{"[server]\nmax_body_memory = \"1KiB\"\n",
                "hookrelay.toml:2: server.max_body_memory: must be at least 64KiB"},
        BadCase{"[server]\nmax_body_memory = \"1MiB\"\nmax_body_memory_per_client = \"2MiB\"\n",
                "hookrelay.toml:3: server.max_body_memory_per_client: must not exceed "
                "max_body_memory (1MiB); 0 means no cap"},
        BadCase{"[server]\nmax_body_memory_per_client = \"1KiB\"\n",
                "hookrelay.toml:2: server.max_body_memory_per_client: must be at least 16KiB"},
        BadCase{"[server]\nmax_body_memory_per_client = \"lots\"\n",
                "hookrelay.toml:2: server.max_body_memory_per_client: invalid size"},
        // Issue 32.20: allowed_hosts holds host[:port] entries, each checked.
        BadCase{"[server]\nallowed_hosts = \"relay.example.com\"\n",
                "hookrelay.toml:2: server.allowed_hosts: must be a list of host names"},
        BadCase{"[server]\nallowed_hosts = [\"relay.example.com\",\n  \"http://x.example\"]\n",
                "server.allowed_hosts[1]: \"http://x.example\" is a URL"},
        BadCase{"[server]\nallowed_hosts = [8080]\n", "server.allowed_hosts[0]: must be a string"},
        BadCase{"[server\n", "hookrelay.toml:1: "},
        // Issue 13: [store] names one store; postgres_url is a PostgreSQL URL, never a directory.
        BadCase{"[store]\npostgres_url = \"./data\"\n",
                "hookrelay.toml:2: store.postgres_url: must be a postgres:// or postgresql:// URL"},
        BadCase{"[store]\npostgres_url = \"mysql://db/hr\"\n",
                "hookrelay.toml:2: store.postgres_url: must be a postgres:// or postgresql:// URL"},
        BadCase{"[store]\ndir = \"d\"\npostgres_url = \"postgres://db/hr\"\n",
                "store.postgres_url: set dir (the embedded store) or postgres_url (PostgreSQL), "
                "not both"},
        // Issue 15: [store] url is the same setting.
        BadCase{"[store]\nurl = \"./data\"\n",
                "hookrelay.toml:2: store.url: must be a postgres:// or postgresql:// URL"},
        BadCase{"[store]\ndir = \"d\"\nurl = \"postgres://db/hr\"\n",
                "store.url: set dir (the embedded store) or url (PostgreSQL), not both"},
        BadCase{"[store]\nurl = \"postgres://a/x\"\npostgres_url = \"postgres://b/y\"\n",
                "store.postgres_url: set url or postgres_url (the same setting), not both"}));

TEST(ConfigTest, ServerConnectionAndMemoryLimits) {
  auto defaults = ParseConfig("", "empty.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->server.max_connections, 10000);
  EXPECT_EQ(defaults->server.max_connections_per_client, 256);
  EXPECT_EQ(defaults->server.max_body_memory, 256u << 20);

  auto c = ParseConfig(
      "[server]\nmax_connections = 500\nmax_connections_per_client = 0\n"
      "max_body_memory = \"64MiB\"\n",
      "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.max_connections, 500);
  EXPECT_EQ(c->server.max_connections_per_client, 0);
  EXPECT_EQ(c->server.max_body_memory, 64u << 20);

  // Issue 32.4a: one client's share of body memory is a quarter of max_body_memory, at least the
  // default max_body (5 MiB) and at most max_body_memory; 0 is no cap.
  EXPECT_EQ(defaults->server.max_body_memory_per_client, 64u << 20);
  EXPECT_EQ(c->server.max_body_memory_per_client, 16u << 20);
  for (auto [memory, share] : {std::pair{"\"8MiB\"", 5u << 20}, std::pair{"\"1MiB\"", 1u << 20}}) {
    auto r = ParseConfig(std::string("[server]\nmax_body_memory = ") + memory + "\n", "h.toml");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->server.max_body_memory_per_client, share) << memory;
  }
  auto share = ParseConfig("[server]\nmax_body_memory_per_client = \"1MiB\"\n", "h.toml");
  ASSERT_TRUE(share.ok()) << share.status().ToString();
  EXPECT_EQ(share->server.max_body_memory_per_client, 1u << 20);
  auto none = ParseConfig("[server]\nmax_body_memory_per_client = 0\n", "h.toml");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->server.max_body_memory_per_client, 0u);

  // A global limit below the default per-client cap lowers the cap with it.
  auto small = ParseConfig("[server]\nmax_connections = 100\n", "hookrelay.toml");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->server.max_connections_per_client, 100);
}

TEST(ConfigTest, StorePostgresUrlIsKeptForServeToRefuse) {
  auto c = ParseConfig("[store]\npostgres_url = \"POSTGRESQL://u:p@db/hr\"\n", "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store.postgres_url, "POSTGRESQL://u:p@db/hr");
}

// Issue 29 and 28: the management listener and the master key file.
TEST(ConfigTest, AdminListenAndMasterKeyFile) {
  auto c = ParseConfig(
      "[server]\nlisten = \"0.0.0.0:8080\"\nadmin_listen = \"127.0.0.1:8081\"\n"
      "[store]\nmaster_key_file = \"/etc/hookrelay/master.key\"\n",
      "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.admin_listen, "127.0.0.1:8081");
  EXPECT_EQ(c->store.master_key_file, "/etc/hookrelay/master.key");
  auto d = ParseConfig("", "hookrelay.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->server.admin_listen, "") << "one listener unless asked";
  auto e = ParseConfig("[server]\nadmin_listen = \"\"\n", "hookrelay.toml");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("server.admin_listen: must not be empty"), std::string::npos)
      << e.status().message();
  EXPECT_TRUE(c->store.migrate_auto);
  auto m = ParseConfig("[store]\nmigrate = \"manual\"\n", "hookrelay.toml");
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->store.migrate_auto);
  auto bad = ParseConfig("[store]\nmigrate = \"sometimes\"\n", "hookrelay.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("store.migrate: must be \"auto\" or \"manual\""),
            std::string::npos)
      << bad.status().message();
  auto f = ParseConfig("[store]\nmaster_key_file = 3\n", "hookrelay.toml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("store.master_key_file"), std::string::npos);
}

// Issue 29: what each listener serves when they listen apart.
TEST(PlaneTest, IngestServesInAndHealthAloneManagementAllButIn) {
  auto head = [](std::vector<std::string> segments) {
    http::RequestHead h;
    h.segments = std::move(segments);
    return h;
  };
  const std::vector<std::pair<std::vector<std::string>, std::pair<bool, bool>>> cases = {
      {{"in", "stripe"}, {true, false}},
      {{"healthz"}, {true, true}},
      {{"readyz"}, {false, true}},
      {{"metrics"}, {false, true}},
      {{"api", "v1", "events"}, {false, true}},
      {{"ui", ""}, {false, true}},
      {{}, {false, true}},
      {{"in"}, {false, true}},
      {{"in", "a", "b"}, {false, true}},
  };
  for (const auto& [segments, serves] : cases) {
    EXPECT_EQ(PlaneServes(Plane::kIngest, head(segments)), serves.first) << segments.size();
    EXPECT_EQ(PlaneServes(Plane::kManagement, head(segments)), serves.second) << segments.size();
  }
}

TEST(ConfigTest, StoreUrlIsThePostgresUrl) {
  auto c = ParseConfig("[store]\nurl = \"postgres://u@db:5433/hr\"\n", "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store.postgres_url, "postgres://u@db:5433/hr");
}

TEST(ConfigTest, MissingFileIsAClearError) {
  auto c = LoadConfigFile("/nonexistent/hookrelay.toml");
  ASSERT_FALSE(c.ok());
  // Issue 32.10: with the OS's reason.
  EXPECT_NE(c.status().message().find(
                "cannot read /nonexistent/hookrelay.toml: No such file or directory"),
            std::string::npos)
      << c.status().message();
}

// Issue 32.10: a string without its closing quote is said so, at the line it opens on (toml++
// says "unescaped control characters …" at the line it noticed).
TEST(ConfigTest, UnterminatedStringIsNamedWithItsLine) {
  struct Case {
    std::string toml;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {"[[sources]]\nname = \"github\n\n[[destinations]]\n",
            "x.toml:2: unterminated string: the \" opened here is not closed on its line"},
           {"# a \"quoted\" comment\n[server]\nlisten = '127.0.0.1:8080\n",
            "x.toml:3: unterminated string: the ' opened here is not closed on its line"},
           {"[server]\nlisten = \"a\\\"b\"\nthreads = \"2\n",
            "x.toml:3: unterminated string: the \" opened here"},
           {"[[sources]]\nname = \"a\"\nspec = \"\"\"\nline\n\nmore\n",
            "x.toml:3: unterminated string: the \"\"\" opened here is never closed"}}) {
    auto parsed = ParseConfig(c.toml, "x.toml");
    ASSERT_FALSE(parsed.ok()) << c.toml;
    EXPECT_EQ(parsed.status().message().rfind(c.expected, 0), 0u)
        << parsed.status().message() << "\nfor\n"
        << c.toml;
    EXPECT_EQ(parsed.status().message().find("control characters"), std::string::npos);
  }
  // Other syntax errors keep toml++'s words.
  auto other = ParseConfig("[server\n", "x.toml");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message().find("unterminated string"), std::string::npos);
}

TEST(DestinationTest, JsonNeverShowsTheSecret) {
  auto c = ParseConfig(kGood, "x.toml");
  ASSERT_TRUE(c.ok());
  std::string shown =
      boost::json::serialize(model::DestinationToJson(*c->catalog.FindDestination("billing")));
  EXPECT_EQ(shown.find("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\"signing_secret_set\":true"), std::string::npos) << shown;
}

}  // namespace
}  // namespace hookrelay::app

namespace hookrelay::app {
namespace {

// Issue 17: files named in a destination's "tls" are read relative to the config file, and the
// catalog object keeps their text; an error names the file, the line and the field.
TEST(ConfigTest, DestinationTlsFilesAreReadRelativeToTheConfigFile) {
  testing::TempDir dir;
  testing::TlsResponder pems(testing::TlsResponder::Mode::kClientCertificate);
  std::filesystem::create_directories(dir.path() + "/certs");
  testing::WriteFile(dir.path() + "/certs/client.pem", pems.client_cert_pem());
  testing::WriteFile(dir.path() + "/certs/client.key", pems.client_key_pem());
  testing::WriteFile(dir.path() + "/certs/ca.pem", pems.ca_pem());
  const std::string toml =
      "[[destinations]]\nname = \"m\"\nurl = \"https://example.com/\"\n"
      "tls = { client_cert = \"@certs/client.pem\", client_key = \"@certs/client.key\", "
      "ca_file = \"certs/ca.pem\" }\n";
  auto c = ParseConfig(toml, dir.path() + "/hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const model::Destination& d = c->catalog.destinations.at("m");
  EXPECT_EQ(d.tls.client_key, pems.client_key_pem());
  EXPECT_EQ(d.tls.ca, pems.ca_pem());
  ASSERT_EQ(c->catalog_objects.size(), 1u);
  EXPECT_NE(c->catalog_objects[0].spec.find("BEGIN PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(c->catalog_objects[0].spec.find("@certs"), std::string::npos);

  auto missing = ParseConfig(
      "[[destinations]]\nname = \"m\"\nurl = \"https://example.com/\"\n"
      "tls = { client_cert = \"@certs/client.pem\", client_key = \"@certs/nope.key\" }\n",
      dir.path() + "/hookrelay.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().field(), "destinations[0].tls.client_key");
  EXPECT_NE(missing.status().message().find("hookrelay.toml:4: destinations[0].tls.client_key: "
                                            "cannot read " +
                                            dir.path() + "/certs/nope.key"),
            std::string::npos)
      << missing.status().message();

  testing::WriteFile(dir.path() + "/certs/other.key", pems.untrusted_key_pem());
  auto mismatch = ParseConfig(
      "[[destinations]]\nname = \"m\"\nurl = \"https://example.com/\"\n"
      "[destinations.tls]\nclient_cert = \"@certs/client.pem\"\nclient_key = "
      "\"@certs/other.key\"\n",
      dir.path() + "/hookrelay.toml");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find(
                "hookrelay.toml:6: destinations[0].tls.client_key: does not match client_cert"),
            std::string::npos)
      << mismatch.status().message();
}

std::string TlsError(const std::string& toml) {
  auto c = ParseConfig(toml, "hookrelay.toml");
  return c.ok() ? "OK" : c.status().message();
}

TEST(ConfigTlsTest, ParsesTlsAndAdminTls) {
  auto c = ParseConfig(
      "[server]\nlisten = \"0.0.0.0:8443\"\nadmin_listen = \"127.0.0.1:8444\"\n"
      "tls = { cert = \"/etc/hookrelay/cert.pem\", key = \"/etc/hookrelay/key.pem\" }\n"
      "[server.admin_tls]\ncert = \"admin.pem\"\nkey = \"admin.key\"\n",
      "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->server.tls.has_value());
  EXPECT_EQ(c->server.tls->cert_file, "/etc/hookrelay/cert.pem");
  EXPECT_EQ(c->server.tls->key_file, "/etc/hookrelay/key.pem");
  ASSERT_TRUE(c->server.admin_tls.has_value());
  // Relative: to the config file's directory, as a destination's files are.
  const std::string dir = std::filesystem::current_path().string();
  EXPECT_EQ(c->server.admin_tls->cert_file, dir + "/admin.pem");
  EXPECT_EQ(c->server.admin_tls->key_file, dir + "/admin.key");
  auto none = ParseConfig("", "hookrelay.toml");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->server.tls.has_value());
  EXPECT_FALSE(none->server.admin_tls.has_value());
}

TEST(ConfigTlsTest, ErrorsNameTheFieldAndLine) {
  EXPECT_EQ(TlsError("[server]\ntls = { cert = \"c.pem\" }\n"),
            "hookrelay.toml:2: server.tls.key: missing: the path of the PEM private key file");
  EXPECT_EQ(TlsError("[server]\ntls = { key = \"k.pem\" }\n"),
            "hookrelay.toml:2: server.tls.cert: missing: the path of the PEM certificate (or "
            "chain) file");
  EXPECT_EQ(TlsError("[server]\n\ntls = { cert = \"\", key = \"k.pem\" }\n"),
            "hookrelay.toml:3: server.tls.cert: must not be empty");
  std::string unknown =
      TlsError("[server.tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nchain = \"x\"\n");
  EXPECT_NE(unknown.find("hookrelay.toml:4: server.tls.chain"), std::string::npos) << unknown;
  std::string not_table = TlsError("[server]\ntls = \"cert.pem\"\n");
  EXPECT_NE(not_table.find("hookrelay.toml:2: server.tls: must be a table"), std::string::npos)
      << not_table;
  std::string not_string = TlsError("[server]\ntls = { cert = 3, key = \"k\" }\n");
  EXPECT_NE(not_string.find("server.tls.cert"), std::string::npos) << not_string;
  EXPECT_EQ(TlsError("[server]\nadmin_tls = { cert = \"c.pem\", key = \"k.pem\" }\n"),
            "hookrelay.toml:2: server.admin_tls: needs admin_listen: admin_tls is the TLS of the "
            "admin listener (for `listen`, use tls)");
  EXPECT_EQ(TlsError("[server]\nadmin_tls = { cert = \"c.pem\", key = \"k.pem\" }\n"
                     "admin_listen = \"127.0.0.1:8081\"\n"),
            "OK");  // order does not matter
  std::string admin_missing = TlsError(
      "[server]\nadmin_listen = \"127.0.0.1:8081\"\n"
      "admin_tls = { cert = \"c.pem\" }\n");
  EXPECT_NE(admin_missing.find("hookrelay.toml:3: server.admin_tls.key: missing"),
            std::string::npos)
      << admin_missing;
}

TEST(ConfigTrustedProxiesTest, NetworksAreReadAndMistakesNamed) {
  auto c = ParseConfig("[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"::1\"]\n", "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->server.trusted_proxies.Contains(boost::asio::ip::make_address("10.1.2.3")));
  EXPECT_TRUE(c->server.trusted_proxies.Contains(boost::asio::ip::make_address("::1")));
  EXPECT_FALSE(c->server.trusted_proxies.Contains(boost::asio::ip::make_address("11.0.0.1")));
  auto bad = ParseConfig("[server]\ntrusted_proxies = [\"10.0.0.0/8\",\n  \"10.0.0.0/40\"]\n",
                         "hookrelay.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "server.trusted_proxies[1]: the prefix length after / must be 0 to 32"),
            std::string::npos)
      << bad.status().message();
  bad = ParseConfig("[server]\ntrusted_proxies = \"10.0.0.0/8\"\n", "hookrelay.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("hookrelay.toml:2: server.trusted_proxies: must be a list"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace hookrelay::app
