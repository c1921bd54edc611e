// Hostile destinations (issue 14): the real `hookrelay serve` binary delivering to local servers
// that misbehave on purpose. Each row of the table is one test: events are acknowledged (202),
// delivered to the destination, and once every delivery is final the server is stopped (SIGTERM,
// exit 0) and the store it wrote is read back: every acknowledged event is there, each of its
// attempts is recorded with the outcome the row expects, and nothing else was reached.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "integration/integration_util.h"
#include "store/store.h"
#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/raw_responder.h"
#include "support/sink.h"
#include "support/smtp_server.h"  // FreePort
#include "support/tls_responder.h"
#include "support/wait.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RawResponder;
using testing::Sink;
using testing::SinkResponse;
using testing::TempDir;
using testing::TlsResponder;

const std::string kToken = "hostile-test-admin-token-0123";
constexpr int kEvents = 3;
constexpr int kMaxAttempts = 2;

// A misbehaving destination, alive for one test.
struct Destination {
  std::string url;
  std::unique_ptr<Sink> sink;
  std::unique_ptr<Sink> redirect_target;  // where a redirect points (must see nothing)
  std::unique_ptr<RawResponder> raw;
  std::unique_ptr<TlsResponder> tls;
};

struct Row {
  const char* name;
  std::function<Destination()> make;
  // What every attempt records: the transport error's name (nullopt: none), and the status
  // (0: none).
  std::optional<std::string> error;
  int status = 0;
  store::DeliveryStatus final_status = store::DeliveryStatus::kFailed;
  // Attempts made: every one (a retryable failure), or one (delivered, or a final status).
  int attempts = kMaxAttempts;
};

// The row's name in test output (gtest would otherwise print the struct's bytes).
void PrintTo(const Row& row, std::ostream* os) { *os << row.name; }

Destination FromSink(std::unique_ptr<Sink> sink) {
  Destination d;
  d.url = sink->url("/hook");
  d.sink = std::move(sink);
  return d;
}

Destination FromRaw(std::vector<std::string> chunks, std::chrono::milliseconds every,
                    RawResponder::Then then = RawResponder::Then::kHold) {
  Destination d;
  d.raw = std::make_unique<RawResponder>(std::move(chunks), every, then);
  d.url = d.raw->url();
  return d;
}

Destination FromTls(TlsResponder::Mode mode) {
  Destination d;
  d.tls = std::make_unique<TlsResponder>(mode);
  d.url = d.tls->url();
  return d;
}

Destination Redirect(int status) {
  auto target = std::make_unique<Sink>();
  auto sink = std::make_unique<Sink>();
  sink->SetDefault(SinkResponse::Status(status).WithHeader("Location", target->url("/private")));
  Destination d = FromSink(std::move(sink));
  d.redirect_target = std::move(target);
  return d;
}

const Row kRows[] = {
    {"SlowHeaders",
     [] {
       std::vector<std::string> bytes;
       for (char c : std::string("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) {
         bytes.emplace_back(1, c);
       }
       return FromRaw(bytes, 200ms);
     },
     "timeout"},
    {"BodyThatNeverEnds",
     [] {
       auto sink = std::make_unique<Sink>();
       sink->SetDefault(SinkResponse::TrickleBody(200, std::string(1000, 't'), 200ms));
       return FromSink(std::move(sink));
     },
     "timeout", 200},
    {"AcceptsAndNeverAnswers",
     [] {
       auto sink = std::make_unique<Sink>();
       sink->SetDefault(SinkResponse::Hang());
       return FromSink(std::move(sink));
     },
     "timeout"},
    {"ResetMidResponse",
     [] {
       return FromRaw({"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial body"}, 0ms,
                      RawResponder::Then::kReset);
     },
     "connection_reset", 200},
    {"InvalidHttp", [] { return FromRaw({"SMTP READY\r\nnot http at all\r\n\r\n"}, 0ms); },
     "malformed_response"},
    // 50 MiB offered in 1 MiB writes as fast as the client reads: the sender reads the snippet
    // (4 KiB) and drops the connection; the attempt counts with its 200.
    {"FiftyMebibyteResponse",
     [] {
       std::vector<std::string> chunks = {"HTTP/1.1 200 OK\r\nContent-Length: 52428800\r\n\r\n"};
       for (int i = 0; i < 50; ++i) chunks.emplace_back(1 << 20, 'b');
       return FromRaw(std::move(chunks), 0ms);
     },
     std::nullopt, 200, store::DeliveryStatus::kDelivered, 1},
    {"TlsHandshakeFailure", [] { return FromTls(TlsResponder::Mode::kHandshakeFailure); }, "tls"},
    {"UntrustedCertificate", [] { return FromTls(TlsResponder::Mode::kUntrustedCertificate); },
     "tls"},
    {"NameDoesNotResolve",
     [] {
       Destination d;
       d.url = "http://hookrelay-hostile-test.invalid/hook";
       return d;
     },
     "dns"},
    {"ConnectionRefused",
     [] {
       Destination d;
       d.url = "http://127.0.0.1:" + std::to_string(testing::FreePort()) + "/hook";
       return d;
     },
     "connection_refused"},
    // A redirect is a final outcome ("redirects are not followed"): one attempt.
    {"RedirectToPrivateAddressNotFollowed302", [] { return Redirect(302); }, std::nullopt, 302,
     store::DeliveryStatus::kFailed, 1},
    {"RedirectToPrivateAddressNotFollowed307", [] { return Redirect(307); }, std::nullopt, 307,
     store::DeliveryStatus::kFailed, 1},
};

class HostileDestinationTest : public ::testing::TestWithParam<Row> {
 protected:
  std::string Config(const std::string& url) {
    return testing::Config()
        .Set("delivery.lease_margin", "1s")
        .Set("delivery.poll_interval", "100ms")
        .Source("src")
        .Destination("d", url,
                     {{"breaker", testing::TomlInline({{"threshold", 100}})},
                      {"policy", testing::TomlInline({{"strategy", "exponential"},
                                                      {"jitter", "none"},
                                                      {"base", "50ms"},
                                                      {"cap", "100ms"},
                                                      {"max_attempts", kMaxAttempts},
                                                      {"max_duration", "1m"},
                                                      {"timeout", "1s"}})}})
        .Route("src", "d");
  }

  std::string Ingest(int n) {
    HttpConnection conn(server_->port());
    HttpResponse r = conn.Send("POST", "/in/src", {{"Content-Type", "application/json"}},
                               "{\"n\":" + std::to_string(n) + "}");
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? std::string(json::parse(r.body).at("id").as_string()) : "";
  }

  // The status of the event's (one) delivery, as the API shows it; "" when unknown.
  std::string DeliveryStatus(const std::string& id) {
    HttpConnection conn(server_->port());
    HttpResponse r =
        conn.Send("GET", "/api/v1/events/" + id, {{"Authorization", "Bearer " + kToken}});
    if (r.status != 200) return "";
    const json::value doc = json::parse(r.body);
    const json::array& ds = doc.at("deliveries").as_array();
    return ds.size() == 1 ? std::string(ds[0].at("status").as_string()) : "";
  }

  TempDir dir_;
  std::unique_ptr<HookrelayServer> server_;
};

TEST_P(HostileDestinationTest, RecordsTheOutcomeAndLosesNothing) {
  const Row& row = GetParam();
  Destination dest = row.make();
  const std::string data = dir_.path() + "/data";
  server_ = std::make_unique<HookrelayServer>(HookrelayServer::Options{
      Config(dest.url),
      data,
      {},
      // A name that does not resolve fails fast, without waiting on a resolver that is not there.
      {{"HOOKRELAY_ADMIN_TOKEN", kToken}, {"RES_OPTIONS", "timeout:1 attempts:1"}}});
  ASSERT_TRUE(server_->ok()) << server_->output();

  std::vector<std::string> ids;
  for (int i = 0; i < kEvents; ++i) ids.push_back(Ingest(i));
  for (const std::string& id : ids) ASSERT_FALSE(id.empty());

  const std::string want = std::string(store::DeliveryStatusName(row.final_status));
  for (const std::string& id : ids) {
    (void)test::WaitFor([&] { return DeliveryStatus(id) == want; }, 60s, 50ms);
    ASSERT_EQ(DeliveryStatus(id), want) << id << "\n" << server_->output();
  }
  ASSERT_EQ(server_->Stop(), 0) << server_->output();
  server_.reset();

  auto store = testing::OpenStoreAt(data);
  ASSERT_NE(store, nullptr);
  const int attempts_each = row.attempts;
  for (const std::string& id : ids) {
    auto event = store->GetEvent(id);
    ASSERT_TRUE(event.ok() && event->has_value()) << id;
    auto deliveries = store->GetDeliveries(id);
    ASSERT_TRUE(deliveries.ok());
    ASSERT_EQ(deliveries->size(), 1u);
    const store::Delivery& d = (*deliveries)[0];
    EXPECT_EQ(d.status, row.final_status) << id;
    EXPECT_EQ(d.attempts, attempts_each) << id;
    auto attempts = store->GetAttempts(d.id);
    ASSERT_TRUE(attempts.ok());
    ASSERT_EQ(attempts->size(), static_cast<size_t>(attempts_each)) << id;
    for (const store::Attempt& a : *attempts) {
      EXPECT_EQ(a.error, row.error) << id << " attempt " << a.n;
      EXPECT_EQ(a.status_code.value_or(0), row.status) << id << " attempt " << a.n;
      EXPECT_LE(a.response_snippet.size(), 4096u);
      // An attempt cut by its 1 s timeout lasted that long (that it was cut at all is the
      // "timeout" error; the test's own deadline bounds how long the attempts took).
      if (row.error == "timeout") {
        EXPECT_GE(a.duration_ms, 900) << id << " attempt " << a.n;
      }
    }
  }
  if (dest.redirect_target) {
    EXPECT_EQ(dest.redirect_target->RequestCount(), 0u);
  }
  if (dest.tls) {
    EXPECT_GT(dest.tls->connections(), 0);
    EXPECT_EQ(dest.tls->handshakes_completed(), 0);
  }
  if (dest.sink) {
    EXPECT_EQ(dest.sink->RequestCount(), static_cast<size_t>(kEvents * attempts_each));
  }
}

INSTANTIATE_TEST_SUITE_P(Table, HostileDestinationTest, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace hookrelay
