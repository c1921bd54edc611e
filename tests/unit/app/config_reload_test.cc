// What a config reload (SIGHUP) applies and what it leaves for a restart (issue 29).

#include "app/config_reload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hookrelay::app {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Config Parse(const std::string& toml) {
  auto c = ParseConfig(toml, "test.toml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Config{};
}

TEST(RestartOnlyChangesTest, TheCatalogAlertsAndLogAreNotAmongThem) {
  const Config running = Parse(R"(
[server]
listen = "127.0.0.1:8080"
[log]
level = "info"
[[sources]]
name = "a"
[[destinations]]
name = "d"
url = "https://example.com/a"
)");
  const Config next = Parse(R"(
[server]
listen = "127.0.0.1:8080"
[log]
level = "debug"
[alerts]
webhook_url = "https://example.com/alerts"
[[sources]]
name = "b"
[[destinations]]
name = "d"
url = "https://example.com/b"
)");
  EXPECT_THAT(RestartOnlyChanges(running, next), IsEmpty());
}

TEST(RestartOnlyChangesTest, ListenersStoreAndEngineSettingsAreNamed) {
  const Config running = Parse(R"(
[server]
listen = "127.0.0.1:8080"
)");
  const Config next = Parse(R"(
[server]
listen = "0.0.0.0:8080"
admin_listen = "127.0.0.1:8081"
max_connections = 50  # the per-client cap follows it down
[store]
dir = "/elsewhere"
[delivery]
poll_interval = "5s"
[transforms]
threads = 1
)");
  EXPECT_THAT(RestartOnlyChanges(running, next),
              ElementsAre("server.listen", "server.admin_listen", "server.max_connections",
                          "server.max_connections_per_client", "store.dir",
                          "delivery.poll_interval", "transforms.threads"));
}

}  // namespace
}  // namespace hookrelay::app
