#include "alerts/alert_dispatcher.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "alerts/alert_switch.h"
#include "alerts/alert_text.h"
#include "common/time_format.h"
#include "http/server.h"
#include "support/log_capture.h"
#include "support/process.h"
#include "support/smtp_server.h"
#include "support/wait.h"

namespace hookrelay::alerts {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using K = Alert::Kind;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Accepts;
using testing::FreePort;
using testing::LogCapture;
using testing::SmtpServer;

// Records webhook requests and answers with `status`.
class WebhookReceiver : public http::Handler {
 public:
  HeadDecision OnHead(const http::RequestHead&) override { return {}; }
  void OnRequest(http::Request request, http::Responder respond) override {
    http::Response r;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(std::move(request));
      r.status = status_;
    }
    r.body = "{}";
    respond(std::move(r));
  }
  std::vector<http::Request> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  void set_status(int s) {
    std::lock_guard lock(mu_);
    status_ = s;
  }

 private:
  mutable std::mutex mu_;
  std::vector<http::Request> requests_;
  int status_ = 200;
};

std::unique_ptr<http::Server> StartServer(http::Handler& handler) {
  http::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  auto server = http::Server::Start(options, handler);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return server.ok() ? std::move(server).value() : nullptr;
}

Alert Make(K kind, std::string destination, TimePoint at, std::string reason) {
  Alert a;
  a.kind = kind;
  a.destination = std::move(destination);
  a.at = at;
  a.reason = std::move(reason);
  return a;
}

AlertDispatcherOptions FastOptions() {
  AlertDispatcherOptions o;
  o.send_timeout = seconds(5);
  o.flush_timeout = seconds(10);
  return o;
}

AlertsConfig EmailConfig(const std::string& smtp_url) {
  AlertsConfig c;
  c.smtp_url = smtp_url;
  c.from = "hookrelay@example.com";
  c.to = {"ops@example.com", "oncall@example.com"};
  c.window = minutes(5);
  return c;
}

TEST(AlertDispatcherTest, EmailsArriveOverSmtp) {
  SmtpServer smtp;
  ASSERT_TRUE(smtp.Ready());
  FakeClock clock;
  AlertDispatcher dispatcher(EmailConfig(smtp.url()), clock, FastOptions());

  Alert opened = Make(K::kBreakerOpened, "billing", clock.Now(),
                      "20 consecutive failures (last: 503 Service Unavailable)");
  opened.until = clock.Now() + minutes(10);
  dispatcher.Raise(opened);
  ASSERT_TRUE(test::WaitFor([&] { return smtp.Messages().size() == 1; })) << smtp.Messages().size();
  std::string mail = smtp.Messages()[0];
  EXPECT_THAT(mail, HasSubstr("Subject: [hookrelay] billing: circuit breaker opened"));
  EXPECT_THAT(mail, HasSubstr("From: hookrelay <hookrelay@example.com>"));
  EXPECT_THAT(mail, HasSubstr("To: ops@example.com, oncall@example.com"));
  EXPECT_THAT(mail, HasSubstr("Message-ID: <"));
  EXPECT_THAT(mail, HasSubstr("Date: "));
  EXPECT_THAT(mail, HasSubstr("Content-Type: text/plain; charset=utf-8"));
  EXPECT_THAT(mail, HasSubstr("20 consecutive failures (last: 503 Service Unavailable)"));
  EXPECT_THAT(mail, HasSubstr("deliveries wait as paused and spend no attempts"));
  // The envelope reached both recipients (aiosmtpd records it).
  EXPECT_THAT(mail, HasSubstr("X-RcptTo: ops@example.com, oncall@example.com"));
  EXPECT_THAT(mail, HasSubstr("X-MailFrom: hookrelay@example.com"));

  // An outage's failures: one message for the whole window, with the total.
  for (int i = 0; i < 250; ++i) {
    dispatcher.Raise(Make(K::kDeliveriesFailed, "billing", clock.Now(),
                          "404 Not Found is not retried: the endpoint does not exist"));
  }
  // The message lands in the maildir just before libcurl sees the server's 250 and counts it.
  EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 1; }));
  clock.Advance(minutes(5));
  ASSERT_TRUE(test::WaitFor([&] { return smtp.Messages().size() == 2; })) << smtp.Messages().size();
  std::string batch = smtp.Find("deliveries failed");
  EXPECT_THAT(batch, HasSubstr("Subject: [hookrelay] billing: 250 deliveries failed"));
  EXPECT_THAT(batch, HasSubstr("250 deliveries to billing failed permanently in the last 5m"));
  EXPECT_THAT(batch, HasSubstr("Last reason: 404 Not Found is not retried: the endpoint does "
                               "not exist."));
  EXPECT_THAT(batch, HasSubstr("hookrelay replay --status failed --destination billing"));

  EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 2; }));
  auto stats = dispatcher.stats();
  EXPECT_EQ(stats.raised, 251);
  EXPECT_EQ(stats.sent, 2);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.dropped, 0);
}

// Batching on simulated time: the first failure opens a 5-minute batch and the dispatcher's
// thread sleeps through the clock until it is due (max_idle_wait is an hour, so nothing else
// wakes it); a clock short of it sends nothing, moved to it sends one alert with the count.
TEST(AlertDispatcherTest, ABatchGoesOutWhenTheClockReachesItsWindow) {
  WebhookReceiver receiver;
  auto server = StartServer(receiver);
  ASSERT_TRUE(server);
  FakeClock clock;
  AlertsConfig config;
  config.webhook_url = server->url() + "/alerts";
  config.window = minutes(5);
  AlertDispatcherOptions options = FastOptions();
  options.max_idle_wait = std::chrono::hours(1);
  AlertDispatcher dispatcher(config, clock, options);
  ASSERT_TRUE(clock.AwaitWaiters(1));  // idle
  const TimePoint first = clock.Now();
  for (int i = 0; i < 3; ++i) {
    dispatcher.Raise(Make(K::kDeliveriesFailed, "billing", clock.Now(), "404 Not Found"));
    clock.Advance(seconds(10));
  }
  // Asleep until the batch is due (Raise woke it to shorten its sleep).
  ASSERT_TRUE(test::WaitFor([&] { return clock.NextDeadline() == first + minutes(5); }))
      << "the dispatcher does not sleep until the batch is due: it waits for "
      << (clock.NextDeadline() ? FormatRfc3339(*clock.NextDeadline()) : "nothing") << ", not "
      << FormatRfc3339(first + minutes(5));
  clock.Set(first + minutes(5) - milliseconds(1));
  EXPECT_EQ(clock.Waiters(), 1u);  // not woken: nothing was sent
  EXPECT_TRUE(receiver.requests().empty());
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(test::WaitFor([&] { return receiver.requests().size() == 1; }));
  json::object o = json::parse(receiver.requests()[0].body).as_object();
  EXPECT_EQ(o.at("kind"), "deliveries_failed");
  EXPECT_EQ(o.at("count"), 3);
  EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 1; }));
  EXPECT_EQ(receiver.requests().size(), 1u);
}

TEST(AlertDispatcherTest, DestructorFlushesPendingBatches) {
  SmtpServer smtp;
  ASSERT_TRUE(smtp.Ready());
  FakeClock clock;
  {
    AlertDispatcher dispatcher(EmailConfig(smtp.url()), clock, FastOptions());
    for (int i = 0; i < 7; ++i) {
      dispatcher.Raise(Make(K::kDeliveriesFailed, "crm", clock.Now(), "410 Gone is not retried"));
    }
  }
  // The destructor returned after sending; the server may still be writing the file.
  ASSERT_TRUE(test::WaitFor([&] { return smtp.Messages().size() == 1; }));
  std::string mail = smtp.Messages()[0];
  EXPECT_THAT(mail, HasSubstr("7 deliveries to crm failed permanently"));
  EXPECT_THAT(mail, HasSubstr("hookrelay replay --status failed --destination crm"));
}

// A config reload changes the channels (issue 29): alerts raised before the change go out through
// the old channel (sent when it is replaced, not dropped), the ones after through the new; the
// counts go on across the change; the same config again changes nothing.
TEST(AlertSwitchTest, ANewChannelTakesOverAndTheOldOneSendsWhatItHeld) {
  WebhookReceiver before;
  WebhookReceiver after;
  auto server_before = StartServer(before);
  auto server_after = StartServer(after);
  ASSERT_TRUE(server_before && server_after);
  FakeClock clock;
  AlertsConfig first;
  first.webhook_url = server_before->url() + "/old";
  AlertSwitch alerts(first, clock, FastOptions());
  EXPECT_FALSE(alerts.Configure(first)) << "an equal config is no change";
  // Batched (a repeat within the window is held): still held by the old dispatcher at the change.
  alerts.Raise(Make(K::kDeliveriesFailed, "crm", clock.Now(), "410 Gone is not retried"));
  alerts.Raise(Make(K::kDeliveriesFailed, "crm", clock.Now(), "410 Gone is not retried"));

  AlertsConfig second;
  second.webhook_url = server_after->url() + "/new";
  EXPECT_TRUE(alerts.Configure(second));
  EXPECT_EQ(alerts.config().webhook_url, second.webhook_url);
  alerts.Raise(Make(K::kBreakerOpened, "billing", clock.Now(), "20 consecutive failures"));
  ASSERT_TRUE(test::WaitFor([&] { return after.requests().size() == 1; }));
  EXPECT_EQ(after.requests()[0].path, "/new");
  EXPECT_EQ(json::parse(after.requests()[0].body).at("destination"), "billing");
  std::vector<http::Request> old = before.requests();
  ASSERT_FALSE(old.empty()) << "what the old channel held was sent when it was replaced";
  for (const http::Request& r : old) {
    EXPECT_EQ(r.path, "/old");
    EXPECT_EQ(json::parse(r.body).at("destination"), "crm");
  }
  ASSERT_TRUE(test::WaitFor([&] {
    return alerts.stats().sent == static_cast<int64_t>(old.size()) + 1;
  })) << alerts.stats().sent;
  EXPECT_EQ(alerts.stats().raised, 3);

  // No channel any more: alerts are counted, none is sent.
  EXPECT_TRUE(alerts.Configure(AlertsConfig{}));
  alerts.Raise(Make(K::kBreakerOpened, "billing", clock.Now(), "again"));
  EXPECT_EQ(alerts.stats().raised, 4);
  EXPECT_EQ(after.requests().size(), 1u);
}

TEST(AlertDispatcherTest, WebhookReceivesJson) {
  WebhookReceiver receiver;
  auto server = StartServer(receiver);
  ASSERT_TRUE(server);
  FakeClock clock(*ParseRfc3339("2026-11-30T14:00:31Z"));
  AlertsConfig config;
  config.webhook_url = server->url() + "/alerts";
  AlertDispatcher dispatcher(config, clock, FastOptions());

  Alert opened = Make(K::kBreakerOpened, "billing", clock.Now(), "20 consecutive failures");
  opened.until = clock.Now() + minutes(5);
  dispatcher.Raise(opened);
  ASSERT_TRUE(test::WaitFor([&] { return receiver.requests().size() == 1; }));
  http::Request r = receiver.requests()[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/alerts");
  EXPECT_THAT(std::string(r.Header("Content-Type").value_or("")), HasSubstr("application/json"));
  json::object o = json::parse(r.body).as_object();
  EXPECT_EQ(o.at("kind"), "breaker_opened");
  EXPECT_EQ(o.at("destination"), "billing");
  EXPECT_EQ(o.at("at"), "2026-11-30T14:00:31.000Z");
  EXPECT_EQ(o.at("reason"), "20 consecutive failures");
  EXPECT_EQ(o.at("count"), 1);
  EXPECT_EQ(o.at("until"), "2026-11-30T14:05:31.000Z");
  EXPECT_THAT(std::string(o.at("text").as_string()),
              HasSubstr("No requests will be sent to billing until 14:05:31 UTC"));
  EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 1; }));
}

TEST(AlertDispatcherTest, EmailAndWebhookBothGetEachAlert) {
  SmtpServer smtp;
  ASSERT_TRUE(smtp.Ready());
  WebhookReceiver receiver;
  auto server = StartServer(receiver);
  ASSERT_TRUE(server);
  FakeClock clock;
  AlertsConfig config = EmailConfig(smtp.url());
  config.webhook_url = server->url() + "/hook";
  AlertDispatcher dispatcher(config, clock, FastOptions());
  dispatcher.Raise(Make(K::kDestinationPaused, "billing", clock.Now(), "410 Gone"));
  ASSERT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 2; }));
  EXPECT_EQ(smtp.Messages().size(), 1u);
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(json::parse(receiver.requests()[0].body).at("kind"), "destination_paused");
}

// Raises one breaker alert through a dispatcher with `config`, expects it to fail (and nothing
// sent), and returns what the dispatcher logged.
std::string RaiseOneThatFails(const AlertsConfig& config, FakeClock& clock) {
  LogCapture log;
  {
    AlertDispatcher dispatcher(config, clock, FastOptions());
    dispatcher.Raise(Make(K::kBreakerOpened, "billing", clock.Now(), "20 consecutive failures"));
    EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().failed == 1; }));
    EXPECT_EQ(dispatcher.stats().sent, 0);
  }
  std::string err = log.text();
  EXPECT_THAT(err,
              HasSubstr("warning email alert breaker_opened for destination billing failed: "));
  return err;
}

// A mail relay as most providers run it: STARTTLS required, then AUTH. The certificate is the
// relay's own (ca_file), verified; the login arrives over TLS and the message is delivered.
TEST(AlertDispatcherTest, EmailOverStartTlsWithLogin) {
  SmtpServer smtp({.starttls = true, .username = "relay", .password = "s3cret-pw"});
  ASSERT_TRUE(smtp.Ready());
  FakeClock clock;
  AlertsConfig config = EmailConfig(smtp.url());
  config.starttls = true;
  config.username = "relay";
  config.password = "s3cret-pw";
  config.ca_file = smtp.ca_file();
  AlertDispatcher dispatcher(config, clock, FastOptions());
  dispatcher.Raise(Make(K::kBreakerOpened, "billing", clock.Now(), "20 consecutive failures"));
  ASSERT_TRUE(test::WaitFor([&] { return smtp.Messages().size() == 1; }));
  EXPECT_THAT(smtp.Messages()[0], HasSubstr("billing: circuit breaker opened"));
  EXPECT_THAT(smtp.Logins(), ::testing::ElementsAre(::testing::EndsWith(" relay ok tls")));
  EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().sent == 1; }));
  EXPECT_EQ(dispatcher.stats().failed, 0);
}

// Each way the secure setup can go wrong ends in a failed, logged alert, never in a message sent
// in clear or to an unverified server, and the password is never printed.
TEST(AlertDispatcherTest, StartTlsAndLoginFailuresAreReported) {
  SmtpServer tls({.starttls = true, .username = "relay", .password = "s3cret-pw"});
  SmtpServer plain;  // offers no STARTTLS
  ASSERT_TRUE(tls.Ready());
  ASSERT_TRUE(plain.Ready());
  struct Case {
    std::string name;
    std::string url;
    std::string password;
    std::string ca_file;
  };
  const std::vector<Case> cases{
      {"untrusted certificate (no ca_file)", tls.url(), "s3cret-pw", ""},
      {"wrong password", tls.url(), "wrong-password-123", tls.ca_file()},
      {"server without STARTTLS", plain.url(), "s3cret-pw", tls.ca_file()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClock clock;
    AlertsConfig config = EmailConfig(c.url);
    config.starttls = true;
    config.username = "relay";
    config.password = c.password;
    config.ca_file = c.ca_file;
    std::string err = RaiseOneThatFails(config, clock);
    EXPECT_THAT(err, Not(HasSubstr(c.password)));
  }
  EXPECT_TRUE(tls.Messages().empty());
  EXPECT_TRUE(plain.Messages().empty());
  // Only the wrong password got as far as AUTH, and over TLS.
  EXPECT_THAT(tls.Logins(), ::testing::ElementsAre(::testing::EndsWith(" relay refused tls")));
}

TEST(AlertDispatcherTest, FailuresAreCountedAndLoggedWithoutThePassword) {
  FakeClock clock;
  AlertsConfig config = EmailConfig("smtp://127.0.0.1:" + std::to_string(FreePort()));
  config.username = "relay";
  config.password = "hunter2-very-secret";
  std::string err = RaiseOneThatFails(config, clock);
  EXPECT_THAT(err, Not(HasSubstr("hunter2")));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(AlertDispatcherTest, WebhookErrorStatusCountsAsFailed) {
  WebhookReceiver receiver;
  receiver.set_status(500);
  auto server = StartServer(receiver);
  ASSERT_TRUE(server);
  FakeClock clock;
  AlertsConfig config;
  config.webhook_url = server->url() + "/alerts";
  LogCapture log;
  {
    AlertDispatcher dispatcher(config, clock, FastOptions());
    dispatcher.Raise(Make(K::kStalled, "billing", clock.Now(), "nothing moves"));
    EXPECT_TRUE(test::WaitFor([&] { return dispatcher.stats().failed == 1; }));
  }
  std::string err = log.text();
  EXPECT_THAT(err,
              HasSubstr("warning webhook alert stalled for destination billing failed: HTTP 500"));
}

TEST(AlertDispatcherTest, DisabledConfigOnlyCounts) {
  FakeClock clock;
  AlertDispatcher dispatcher(AlertsConfig{}, clock, FastOptions());
  dispatcher.Raise(Make(K::kBreakerOpened, "billing", clock.Now(), "x"));
  auto stats = dispatcher.stats();
  EXPECT_EQ(stats.raised, 1);
  EXPECT_EQ(stats.sent + stats.failed + stats.dropped, 0);
}

TEST(AlertDispatcherTest, BuildEmailIsWellFormed) {
  AlertsConfig config = EmailConfig("smtp://127.0.0.1:25");
  Alert a = Make(K::kDeliveriesFailed, "billing", FromUnixMillis(1'700'000'000'000),
                 std::string(2000, 'x') + "\r\nBcc: evil@example.com");
  a.count = 3;
  std::string m = BuildEmail(a, config, FromUnixMillis(1'700'000'000'000));
  EXPECT_THAT(m, HasSubstr("Date: Tue, 14 Nov 2023 22:13:20 +0000\r\n"));
  EXPECT_THAT(m, HasSubstr("Subject: [hookrelay] billing: 3 deliveries failed\r\n"));
  EXPECT_THAT(m, HasSubstr("Message-ID: <"));
  EXPECT_THAT(m, HasSubstr("@example.com>\r\n"));
  EXPECT_THAT(m, HasSubstr("\r\n\r\n3 deliveries to billing failed permanently"));
  // Every line ends in CRLF and is at most 998 octets; no bare CR or LF.
  size_t start = 0;
  while (start < m.size()) {
    size_t end = m.find("\r\n", start);
    ASSERT_NE(end, std::string::npos);
    std::string_view line(m.data() + start, end - start);
    EXPECT_LE(line.size(), 998u);
    EXPECT_EQ(line.find_first_of("\r\n"), std::string_view::npos);
    start = end + 2;
  }
  // The reason's line break stayed in the body; it did not become a header.
  size_t body = m.find("\r\n\r\n");
  EXPECT_GT(m.find("Bcc: evil"), body);

  Alert odd = Make(K::kBreakerOpened, "b\xc3\xbcro", FromUnixMillis(0), "r");
  std::string encoded = BuildEmail(odd, config, FromUnixMillis(0));
  EXPECT_THAT(encoded, HasSubstr("Subject: =?UTF-8?B?"));
}

}  // namespace
}  // namespace hookrelay::alerts
