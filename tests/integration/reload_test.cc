// SIGHUP reloads the config file (issue 29), on the real binary: a destination's new URL takes
// over under load with no event lost; an invalid file is refused as a whole and counted; the log
// level changes; settings only a restart applies are said to be so. And serve speaks systemd's
// notify protocol (READY, WATCHDOG, RELOADING, STOPPING) to a NOTIFY_SOCKET of the test's own.

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "support/integration_test.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::Sink;

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class ReloadTest : public testing::IntegrationTest {
 protected:
  testing::Config Base(const std::string& url) {
    return testing::Config()
        .Source("src")
        .Destination("d", url)
        .Route("src", "d")
        .Set("delivery.poll_interval", testing::TomlValue("100ms"));
  }
  // Writes `config` over the file serve was started with and sends SIGHUP; waits until the
  // `n`th reload is logged as applied or refused.
  void Reload(const std::string& config, size_t n) {
    std::ofstream(data_dir() + ".toml", std::ios::trunc) << config;
    ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
    ASSERT_TRUE(test::WaitFor([&] {
      const std::string out = server_->output();
      return Occurrences(out, "config reloaded from ") +
                 Occurrences(out, "config reload refused") >=
             n;
    })) << server_->output();
  }
  std::string Ingest(int n) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", {}, R"({"n":)" + std::to_string(n) + "}");
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }
  std::string Metrics() { return Api("GET", "/metrics").body; }
  static std::set<std::string> Ids(const Sink& sink) {
    std::set<std::string> ids;
    for (const auto& r : sink.Requests())
      ids.insert(std::string(r.Header("webhook-id").value_or("")));
    return ids;
  }

  Sink second_;
};

TEST_F(ReloadTest, ADestinationsNewUrlTakesOverUnderLoadAndNoEventIsLost) {
  StartServer(Base(sink_.url("/old")));
  std::atomic<bool> stop{false};
  std::atomic<bool> reloaded{false};
  std::mutex mu;
  std::vector<std::string> before;  // accepted before the reload was logged
  std::vector<std::string> after;   // accepted once it was
  std::thread load([&] {
    for (int n = 0; !stop.load(); ++n) {
      const bool done = reloaded.load();
      std::string id = Ingest(n);
      if (id.empty()) continue;
      std::lock_guard lock(mu);
      (done ? after : before).push_back(std::move(id));
      std::this_thread::sleep_for(milliseconds(5));  // a steady stream, not a flood
    }
  });
  ASSERT_TRUE(test::WaitFor([&] { return sink_.RequestCount() >= 50; }));
  Reload(Base(second_.url("/new")), 1);
  reloaded = true;
  ASSERT_TRUE(test::WaitFor([&] { return second_.RequestCount() >= 50; })) << server_->output();
  stop = true;
  load.join();

  std::set<std::string> at_old = Ids(sink_);
  std::set<std::string> at_new = Ids(second_);
  ASSERT_TRUE(test::WaitFor([&] {
    at_old = Ids(sink_);
    at_new = Ids(second_);
    for (const auto& id : before) {
      if (!at_old.count(id) && !at_new.count(id)) return false;
    }
    for (const auto& id : after) {
      if (!at_new.count(id)) return false;
    }
    return true;
  })) << "every event accepted is delivered; "
      << before.size() << " before, " << after.size() << " after the reload";
  for (const auto& id : after) {
    EXPECT_EQ(at_old.count(id), 0u)
        << id << " was accepted after the reload but went to the old URL";
  }
  EXPECT_GE(after.size(), 20u);
  const std::string out = server_->output();
  EXPECT_NE(out.find("config reloaded from " + data_dir() +
                     ".toml: catalog: from the config "
                     "file 0 added, 1 updated, 0 removed"),
            std::string::npos)
      << out;
  const std::string m = Metrics();
  EXPECT_NE(m.find("hookrelay_config_reloads_total 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("hookrelay_config_reload_failures_total 0\n"), std::string::npos) << m;
  StopServer();
}

TEST_F(ReloadTest, AnInvalidConfigIsRefusedAsAWholeAndTheOldOneKeepsServing) {
  StartServer(Base(sink_.url("/old")));
  // A new source beside a typo: neither is taken.
  std::string broken = Base(second_.url("/new")).Source("extra");
  broken += "\n[server]\nlisten = 8080\n";
  Reload(broken, 1);
  std::string out = server_->output();
  EXPECT_NE(out.find("config reload refused, nothing changed (the config in use is kept): " +
                     data_dir() + ".toml:"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(": server.listen: must be a string, not a number"), std::string::npos) << out;
  EXPECT_EQ(Api("GET", "/api/v1/sources/extra").status, 404);
  Ingest(1);
  ASSERT_TRUE(test::WaitFor([&] { return sink_.RequestCount() == 1; }));
  EXPECT_EQ(second_.RequestCount(), 0u);
  // A destination address that serve would refuse.
  Reload(testing::Config()
             .Source("src")
             .Destination("d", "http://127.0.0.1:9/x", {{"allow_private", false}})
             .Route("src", "d"),
         2);
  out = server_->output();
  EXPECT_EQ(Occurrences(out, "config reload refused"), 2u) << out;
  EXPECT_NE(out.find("destination \"d\": url: points at 127.0.0.1"), std::string::npos) << out;
  std::string m = Metrics();
  EXPECT_NE(m.find("hookrelay_config_reload_failures_total 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("hookrelay_config_reloads_total 0\n"), std::string::npos) << m;
  // Fixed: taken.
  Reload(Base(second_.url("/new")).Source("extra"), 3);
  EXPECT_EQ(Api("GET", "/api/v1/sources/extra").status, 200) << server_->output();
  Ingest(2);
  ASSERT_TRUE(test::WaitFor([&] { return second_.RequestCount() == 1; }));
  m = Metrics();
  EXPECT_NE(m.find("hookrelay_config_reloads_total 1\n"), std::string::npos) << m;
  StopServer();
}

TEST_F(ReloadTest, TheLogLevelChangesAndRestartOnlySettingsAreSaidToBeSo) {
  StartServer(Base(sink_.url("/hooks")));
  testing::Config quieter = Base(sink_.url("/hooks"));
  quieter.Set("log.level", testing::TomlValue("warn")).Set("server.threads", testing::TomlValue(1));
  Reload(quieter, 1);
  std::string out = server_->output();
  EXPECT_NE(out.find("config reloaded from " + data_dir() +
                     ".toml: log: level warning, format "
                     "text (was level info, format text)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("config reload: server.threads changed; it takes effect at the next restart"),
            std::string::npos)
      << out;
  // At warn, the next reload's info lines are not logged, its warning is.
  const size_t received = Occurrences(out, "SIGHUP received: reloading");
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  ASSERT_TRUE(test::WaitFor(
      [&] { return Metrics().find("hookrelay_config_reloads_total 2\n") != std::string::npos; }));
  ASSERT_TRUE(test::WaitFor([&] {
    return Occurrences(server_->output(), "server.threads changed") == 2;
  })) << server_->output();
  EXPECT_EQ(Occurrences(server_->output(), "SIGHUP received: reloading"), received);
  StopServer();
}

// A datagram socket standing in for systemd's notify socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    bound_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{0, 100 * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool bound() const { return bound_; }
  // Every message received so far, in order.
  const std::vector<std::string>& Read() {
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) break;
      messages_.emplace_back(buf, static_cast<size_t>(n));
    }
    return messages_;
  }
  size_t Count(const std::string& prefix) {
    size_t n = 0;
    for (const std::string& m : Read()) n += m.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
  std::vector<std::string> messages_;
};

TEST_F(ReloadTest, ServeTellsSystemdWhenItIsReadyReloadsAndStopsAndFeedsTheWatchdog) {
  NotifySocket notify(data_dir() + ".notify");
  ASSERT_TRUE(notify.bound());
  // WatchdogSec=2s: fed every second while the engine's loop (every 100 ms here) runs.
  StartServer(Base(sink_.url("/hooks")), {},
              {{"NOTIFY_SOCKET", data_dir() + ".notify"}, {"WATCHDOG_USEC", "2000000"}});
  ASSERT_TRUE(test::WaitFor([&] { return notify.Count("READY=1") == 1; }));
  EXPECT_NE(notify.Read().front().find("STATUS=serving on http://127.0.0.1:"), std::string::npos)
      << notify.Read().front();
  ASSERT_TRUE(test::WaitFor([&] { return notify.Count("WATCHDOG=1") >= 2; }, seconds(10)));
  Reload(Base(sink_.url("/hooks")), 1);
  ASSERT_TRUE(test::WaitFor([&] { return notify.Count("READY=1") == 2; }));
  EXPECT_EQ(notify.Count("RELOADING=1"), 1u);
  StopServer();
  ASSERT_TRUE(test::WaitFor([&] { return notify.Count("STOPPING=1") == 1; }));
  EXPECT_NE(server_->output().find("feeding the service manager's watchdog (timeout 2000 ms)"),
            std::string::npos)
      << server_->output();
}

}  // namespace
}  // namespace hookrelay
