#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "common/crypto.h"
#include "delivery/kinds/http/http_sender.h"
#include "delivery/signer.h"
#include "support/raw_responder.h"
#include "support/sink.h"
#include "support/smtp_server.h"

namespace hookrelay::delivery {
namespace {

using hookrelay::testing::RawResponder;
using hookrelay::testing::Sink;
using hookrelay::testing::SinkRequest;
using hookrelay::testing::SinkResponse;
using policy::TransportError;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kWait = seconds(30);

// The sinks are on loopback: a developer's proxy settings must not reroute these tests.
class NoProxyEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    for (const char* name : {"http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                             "no_proxy", "NO_PROXY"}) {
      unsetenv(name);
    }
  }
};
::testing::Environment* const kNoProxyEnvironment = ::testing::AddGlobalTestEnvironment(
    new NoProxyEnvironment);  // upper bound for anything that should finish quickly

HttpSender::Options AllowPrivate() {
  HttpSender::Options o;
  o.allow_private_destinations = true;
  return o;
}

SendRequest Post(std::string url, std::string body = "{}") {
  SendRequest r;
  r.url = std::move(url);
  r.body = std::move(body);
  r.headers = {{"Content-Type", "application/json"}};
  r.timeout = seconds(10);
  return r;
}

// Sends and waits for the result. The promise is shared so a late callback is harmless.
SendResult SendAndWait(HttpSender& sender, SendRequest request) {
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto future = promise->get_future();
  sender.Send(std::move(request), [promise](SendResult r) { promise->set_value(std::move(r)); });
  if (future.wait_for(kWait) != std::future_status::ready) {
    ADD_FAILURE() << "no result within " << kWait.count() << "s";
    return {};
  }
  return future.get();
}

// A port on 127.0.0.1 with nothing listening: bound, then released.
uint16_t UnusedPort() { return static_cast<uint16_t>(testing::FreePort()); }

std::string Refusal(const std::string& address) {
  return "refused to connect to " + address +
         ": loopback/private addresses are not allowed for this destination (allow_private or "
         "--allow-private-destinations)";
}

// Sets environment variables for the life of the object (restoring the previous values).
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (auto& [name, old] : saved_) {
      if (old) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(SenderTest, Delivers200WithBodySnippet) {
  Sink sink;
  sink.Enqueue(SinkResponse::Status(200, "thanks"));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url("/hooks"));
  request.tag = 42;
  const TimePoint before = SystemClock::Instance().Now();
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.tag, 42u);
  EXPECT_EQ(r.outcome.error, TransportError::kNone) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.snippet, "thanks");
  EXPECT_FALSE(r.outcome.retry_after.has_value());
  EXPECT_TRUE(r.error_detail.empty());
  EXPECT_GE(r.started_at, before);
  EXPECT_LE(r.started_at, SystemClock::Instance().Now());
  EXPECT_GE(r.duration.count(), 0);
  EXPECT_EQ(sender.InFlight(), 0);
  ASSERT_EQ(sink.RequestCount(), 1u);
  EXPECT_EQ(sink.Requests()[0].method, "POST");
  EXPECT_EQ(sink.Requests()[0].path, "/hooks");
}

TEST(SenderTest, StartedAtAndDurationComeFromTheClock) {
  Sink sink;
  FakeClock clock;
  HttpSender sender(AllowPrivate(), clock);
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.started_at, clock.Now());
  EXPECT_EQ(r.duration, Duration(0));  // the fake monotonic clock did not move
}

TEST(SenderTest, Reports500) {
  Sink sink;
  sink.Enqueue(SinkResponse::Status(500, "boom"));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.error, TransportError::kNone);
  EXPECT_EQ(r.outcome.status_code, 500);
  EXPECT_EQ(r.snippet, "boom");
}

TEST(SenderTest, Captures429RetryAfter) {
  Sink sink;
  sink.Enqueue(SinkResponse::Status(429).WithHeader("Retry-After", "120"));
  sink.Enqueue(
      SinkResponse::Status(503).WithHeader("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.status_code, 429);
  EXPECT_EQ(r.outcome.retry_after, "120");
  r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.status_code, 503);
  EXPECT_EQ(r.outcome.retry_after, "Wed, 21 Oct 2015 07:28:00 GMT");
}

TEST(SenderTest, SlowSinkTimesOut) {
  Sink sink;
  sink.Enqueue(SinkResponse::Status(200).WithDelay(seconds(20)));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url());
  request.timeout = milliseconds(300);
  SendResult r = SendAndWait(sender, request);
  // A timeout, not the sink's 200 twenty seconds later: the timeout applied. (No wall-clock
  // bound on how long that took: a loaded machine must not fail this; timings are benchmarks.)
  EXPECT_EQ(r.outcome.error, TransportError::kTimeout) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_FALSE(r.error_detail.empty());
  EXPECT_GE(r.duration, milliseconds(290));  // whole milliseconds, each end truncated
  EXPECT_EQ(sink.RequestCount(), 1u);
}

TEST(SenderTest, HangingSinkTimesOut) {
  Sink sink;
  sink.Enqueue(SinkResponse::Hang());
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url());
  request.timeout = milliseconds(200);
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.error, TransportError::kTimeout);  // the sink never answers
}

// Issue 11.9: the status line arrived, then the body did not (or too slowly): a timeout that
// keeps the status, so the reason can say "timeout after status 200".
TEST(SenderTest, TimeoutAfterTheStatusLineKeepsTheStatus) {
  Sink sink;
  sink.Enqueue(SinkResponse::HeadThenHang(200));
  sink.Enqueue(SinkResponse::TrickleBody(200, std::string(50, 'y'), milliseconds(500)));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    SendRequest request = Post(sink.url());
    request.timeout = milliseconds(1200);
    SendResult r = SendAndWait(sender, request);
    EXPECT_EQ(r.outcome.error, TransportError::kTimeout) << r.error_detail;
    EXPECT_EQ(r.outcome.status_code, 200);
    policy::Classification c = policy::Classify(r.outcome);
    EXPECT_EQ(c.cls, policy::OutcomeClass::kRetryable);
    EXPECT_EQ(c.reason.rfind("timeout after status 200", 0), 0u) << c.reason;
    if (i == 1) {
      EXPECT_EQ(r.snippet.substr(0, 1), "y");
    }
  }
}

std::vector<std::string> Bytes(std::string_view text) {
  std::vector<std::string> out;
  for (char c : text) out.emplace_back(1, c);
  return out;
}

// A response trickled a byte at a time that has not finished its status line when the timeout
// expires: the endpoint did answer, partly, and the reason says how much arrived.
TEST(SenderTest, TimeoutWithAPartialStatusLineCountsTheBytes) {
  RawResponder server(Bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), milliseconds(100));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(server.url());
  request.timeout = milliseconds(1250);  // about 12 bytes
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.error, TransportError::kTimeout) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_GE(r.outcome.bytes_received, 5u);
  EXPECT_LE(r.outcome.bytes_received, 16u);
  policy::Classification c = policy::Classify(r.outcome);
  EXPECT_EQ(c.reason.rfind("timeout after " + std::to_string(r.outcome.bytes_received) +
                               " bytes of the response",
                           0),
            0u)
      << c.reason;
}

// Endless "100 Continue": a 1xx is not the final status, so none is recorded.
TEST(SenderTest, OnlyInterimResponsesAreNotAStatus) {
  std::vector<std::string> continues(50, "HTTP/1.1 100 Continue\r\n\r\n");
  RawResponder server(continues, milliseconds(50));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(server.url());
  request.timeout = milliseconds(800);
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.error, TransportError::kTimeout) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_TRUE(r.outcome.only_interim);
  policy::Classification c = policy::Classify(r.outcome);
  EXPECT_EQ(c.reason.rfind("timeout: only interim 1xx responses", 0), 0u) << c.reason;
}

// Not HTTP: a garbage status line, or a header line without a colon.
TEST(SenderTest, GarbageStatusLineOrHeaderIsMalformedResponse) {
  for (const char* response :
       {"garbage here\r\n\r\n", "HTTP/1.1 200 OK\r\nNo colon in this line\r\n\r\n"}) {
    SCOPED_TRACE(response);
    RawResponder server({response}, milliseconds(1));
    HttpSender sender(AllowPrivate(), SystemClock::Instance());
    SendRequest request = Post(server.url());
    request.timeout = milliseconds(3000);
    SendResult r = SendAndWait(sender, request);
    EXPECT_EQ(policy::TransportErrorName(r.outcome.error), "malformed_response") << r.error_detail;
    policy::Classification c = policy::Classify(r.outcome);
    EXPECT_EQ(c.cls, policy::OutcomeClass::kRetryable);
    EXPECT_NE(c.reason.find("the endpoint sent a malformed HTTP response"), std::string::npos)
        << c.reason;
  }
}

// Issue 11.9: response headers past libcurl's limit (300 KB in all) are not a reset.
TEST(SenderTest, HugeResponseHeadersAreResponseTooLarge) {
  Sink sink;
  SinkResponse big = SinkResponse::Status(200);
  for (int i = 0; i < 8; ++i) {
    big.headers.emplace_back("X-Big-" + std::to_string(i), std::string(50 * 1024, 'h'));
  }
  sink.Enqueue(std::move(big));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(policy::TransportErrorName(r.outcome.error), "response_too_large") << r.error_detail;
  policy::Classification c = policy::Classify(r.outcome);
  EXPECT_EQ(c.reason.find("closed the connection"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("too large"), std::string::npos) << c.reason;

  // One field past libcurl's 100 KB limit for a single header.
  SinkResponse one = SinkResponse::Status(200);
  one.headers.emplace_back("X-Huge", std::string(150 * 1024, 'h'));
  sink.Enqueue(std::move(one));
  r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(policy::TransportErrorName(r.outcome.error), "response_too_large") << r.error_detail;
}

TEST(SenderTest, ConnectionRefused) {
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r =
      SendAndWait(sender, Post("http://127.0.0.1:" + std::to_string(UnusedPort()) + "/"));
  EXPECT_EQ(r.outcome.error, TransportError::kConnectionRefused) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_FALSE(r.error_detail.empty());
}

TEST(SenderTest, ResetIsConnectionReset) {
  Sink sink;
  sink.Enqueue(SinkResponse::Reset());
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.error, TransportError::kConnectionReset) << r.error_detail;
  EXPECT_EQ(sink.RequestCount(), 1u);
}

TEST(SenderTest, CloseWithoutAnswerIsConnectionReset) {
  Sink sink;
  sink.Enqueue(SinkResponse::Close());
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.error, TransportError::kConnectionReset) << r.error_detail;
}

// Decision: the body is read (and discarded past the snippet) for at most 1 MiB; then the
// transfer is cut short and the attempt counts with the status the endpoint already sent. So an
// endless 200 is a success with a 4096-byte snippet, well before the timeout.
TEST(SenderTest, EndlessBodyKeepsSnippetAndEnds) {
  Sink sink;
  sink.Enqueue(SinkResponse::EndlessBody(200));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url());
  request.timeout = seconds(20);
  SendResult r = SendAndWait(sender, request);
  // Ended as a success, not by the timeout: the sender stopped reading the endless body.
  EXPECT_EQ(r.outcome.error, TransportError::kNone) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.snippet, std::string(4096, 'x'));

  // The sender is still usable afterwards.
  r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.status_code, 200);
}

TEST(SenderTest, SnippetLimitIsConfigurable) {
  Sink sink;
  sink.Enqueue(SinkResponse::Status(200, std::string(100, 'a') + std::string(100, 'b')));
  HttpSender::Options options = AllowPrivate();
  options.snippet_limit = 150;
  HttpSender sender(options, SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.snippet, std::string(100, 'a') + std::string(50, 'b'));
}

TEST(SenderTest, RedirectsAreNotFollowed) {
  Sink sink;
  sink.Enqueue("/", SinkResponse::Status(302).WithHeader("Location", sink.url("/elsewhere")));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url("/")));
  EXPECT_EQ(r.outcome.error, TransportError::kNone);
  EXPECT_EQ(r.outcome.status_code, 302);
  ASSERT_EQ(sink.RequestCount(), 1u);
  EXPECT_EQ(sink.Requests()[0].path, "/");
}

TEST(SenderTest, BodyIsByteExact) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  std::string body;
  for (int round = 0; round < 1200; ++round) {
    for (int b = 0; b < 256; ++b) body.push_back(static_cast<char>(b));
  }
  body += std::string("\0\0trailing\0", 11);
  SendResult r = SendAndWait(sender, Post(sink.url(), body));
  EXPECT_EQ(r.outcome.status_code, 200);
  ASSERT_EQ(sink.RequestCount(), 1u);
  const SinkRequest got = sink.Requests()[0];
  EXPECT_EQ(got.body.size(), body.size());
  EXPECT_TRUE(got.body == body);
  EXPECT_EQ(got.Header("Content-Length"), std::to_string(body.size()));
  EXPECT_FALSE(got.Header("Expect").has_value());
  EXPECT_FALSE(got.Header("Transfer-Encoding").has_value());
}

TEST(SenderTest, EmptyBody) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url(), ""));
  EXPECT_EQ(r.outcome.status_code, 200);
  ASSERT_EQ(sink.RequestCount(), 1u);
  EXPECT_EQ(sink.Requests()[0].method, "POST");
  EXPECT_EQ(sink.Requests()[0].Header("Content-Length"), "0");
}

TEST(SenderTest, HeadersArrive) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url("/in?x=1"));
  request.headers = {{"Content-Type", "application/json"},
                     {"webhook-id", "01JABC"},
                     {"X-Env", "prod"},
                     {"X-Empty", ""},
                     {"X-Injected", "a\r\nX-Evil: 1"},
                     {"Content-Length", "999"}};
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.status_code, 200);
  ASSERT_EQ(sink.RequestCount(), 1u);
  const SinkRequest got = sink.Requests()[0];
  EXPECT_EQ(got.target, "/in?x=1");
  EXPECT_EQ(got.path, "/in");
  EXPECT_EQ(got.Header("content-type"), "application/json");
  EXPECT_EQ(got.Header("webhook-id"), "01JABC");
  EXPECT_EQ(got.Header("x-env"), "prod");
  EXPECT_EQ(got.Header("x-empty"), "");
  EXPECT_FALSE(got.Header("X-Injected").has_value());
  EXPECT_FALSE(got.Header("X-Evil").has_value());
  EXPECT_EQ(got.Header("Content-Length"), "2");
  EXPECT_EQ(got.Header("User-Agent"), std::string("hookrelay/") + HOOKRELAY_VERSION);
  EXPECT_EQ(got.Header("Host"), "127.0.0.1:" + std::to_string(sink.port()));
  EXPECT_FALSE(got.Header("Accept").has_value());
  EXPECT_FALSE(got.Header("Expect").has_value());
}

TEST(SenderTest, NoContentTypeUnlessGivenAndCustomUserAgent) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(sink.url());
  request.headers = {{"User-Agent", "custom/1"}};
  EXPECT_EQ(SendAndWait(sender, request).outcome.status_code, 200);
  ASSERT_EQ(sink.RequestCount(), 1u);
  const SinkRequest got = sink.Requests()[0];
  EXPECT_FALSE(got.Header("Content-Type").has_value());  // not libcurl's form default
  EXPECT_EQ(got.Header("User-Agent"), "custom/1");
}

TEST(SenderTest, SignedRequestVerifiesAtTheSink) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  SendRequest request = Post(sink.url(), R"({"type":"invoice.paid"})");
  for (auto& h : StandardWebhookHeaders("01JEVENT", SystemClock::Instance().Now(), request.body,
                                        {*Base64Decode(secret.substr(6))})) {
    request.headers.push_back(h);
  }
  EXPECT_EQ(SendAndWait(sender, request).outcome.status_code, 200);
  ASSERT_EQ(sink.RequestCount(), 1u);
  std::string why;
  EXPECT_TRUE(hookrelay::testing::VerifyStandardSignature(sink.Requests()[0], secret, &why)) << why;
}

TEST(SenderTest, KeepAliveReusesTheConnection) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(SendAndWait(sender, Post(sink.url())).outcome.status_code, 200);
  }
  EXPECT_EQ(sink.RequestCount(), 10u);
  EXPECT_EQ(sink.ConnectionCount(), 1u);
  std::set<uint64_t> connections;
  for (const auto& r : sink.Requests()) connections.insert(r.connection);
  EXPECT_EQ(connections.size(), 1u);
  // All ten arrived within the first seconds of the histogram.
  size_t counted = 0;
  for (size_t n : sink.ArrivalsPerSecond()) counted += n;
  EXPECT_EQ(counted, 10u);
}

TEST(SenderTest, TwoHundredConcurrentSendsAllComplete) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  constexpr int kCount = 200;
  std::mutex mu;
  std::condition_variable cv;
  std::set<uint64_t> tags;
  int ok = 0;
  for (int i = 0; i < kCount; ++i) {
    SendRequest request = Post(sink.url("/p" + std::to_string(i % 7)), std::to_string(i));
    request.tag = static_cast<uint64_t>(i);
    sender.Send(std::move(request), [&](SendResult r) {
      std::lock_guard<std::mutex> lock(mu);
      tags.insert(r.tag);
      if (r.outcome.status_code == 200) ++ok;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return tags.size() == kCount; }));
  }
  EXPECT_EQ(ok, kCount);
  EXPECT_EQ(sink.RequestCount(), static_cast<size_t>(kCount));
  EXPECT_EQ(sender.InFlight(), 0);
  EXPECT_EQ(*tags.begin(), 0u);
  EXPECT_EQ(*tags.rbegin(), static_cast<uint64_t>(kCount - 1));
}

// The default connection cap is not below one destination's largest max_concurrency: 600
// requests in flight at once to one host get 600 connections (with 512, the last 88 waited
// inside libcurl for a connection, and a 100 ms endpoint got 512 requests per 100 ms).
TEST(SenderTest, SixHundredRequestsInFlightGetSixHundredConnections) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 2000) {
    GTEST_SKIP() << "open-file limit " << limit.rlim_cur << " is too low for 2 x 600 sockets";
  }
  Sink sink;
  sink.SetDefault(SinkResponse::Status(200).WithDelay(milliseconds(1500)));
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());
  constexpr int kCount = 600;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, ok = 0;
  for (int i = 0; i < kCount; ++i) {
    SendRequest request = Post(sink.url("/slow"));
    request.allow_private = true;
    sender.Send(std::move(request), [&](SendResult r) {
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (r.outcome.status_code == 200) ++ok;
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return done == kCount; }));
  EXPECT_EQ(ok, kCount);
  EXPECT_EQ(sink.ConnectionCount(), static_cast<size_t>(kCount));
}

// With two sending threads, requests go out on both (each answers on its own thread), and the
// connection cap holds for both together: 12 slow requests at once, 4 connections in all.
TEST(SenderTest, TwoSendingThreadsShareTheConnectionCap) {
  Sink sink;
  sink.SetDefault(SinkResponse::Status(200).WithDelay(milliseconds(200)));
  HttpSender::Options options = AllowPrivate();
  options.threads = 2;
  options.max_connections = 4;
  HttpSender sender(options, SystemClock::Instance());
  constexpr int kCount = 12;
  std::mutex mu;
  std::condition_variable cv;
  std::set<std::thread::id> threads;
  int done = 0, ok = 0;
  for (int i = 0; i < kCount; ++i) {
    sender.Send(Post(sink.url("/slow")), [&](SendResult r) {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
      ++done;
      if (r.outcome.status_code == 200) ++ok;
      cv.notify_all();
    });
  }
  EXPECT_GT(sender.InFlight(), 0);
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, kWait, [&] { return done == kCount; }));
  }
  EXPECT_EQ(ok, kCount);
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_LE(sink.ConnectionCount(), 4u);
  EXPECT_EQ(sender.InFlight(), 0);
}

TEST(SenderTest, DestructorCompletesOutstandingRequests) {
  Sink sink;
  sink.SetDefault(SinkResponse::Hang());
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto future = promise->get_future();
  {
    HttpSender sender(AllowPrivate(), SystemClock::Instance());
    SendRequest request = Post(sink.url());
    request.timeout = seconds(60);
    sender.Send(request, [promise](SendResult r) { promise->set_value(std::move(r)); });
    ASSERT_TRUE(sink.WaitForRequests(1, kWait));
    EXPECT_EQ(sender.InFlight(), 1);
  }
  ASSERT_EQ(future.wait_for(seconds(0)), std::future_status::ready);
  SendResult r = future.get();
  EXPECT_EQ(r.outcome.error, TransportError::kOther);
  EXPECT_EQ(r.error_detail, "shutting down");
}

// Easy handles and connections are reused from one request to the next (one at a time here, so
// always the same handle and the same keep-alive connection): nothing of a request may reach the
// next one: not its headers, body, user agent, timeout, nor its allow_private.
TEST(SenderTest, AReusedHandleCarriesNothingOfTheLastRequest) {
  Sink sink;
  sink.SetDefault(SinkResponse::Status(200, "ok"));
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());

  SendRequest first = Post(sink.url("/one"), "the first body, longer than the others");
  first.allow_private = true;
  first.headers = {{"Content-Type", "text/plain"},
                   {"X-Custom", "one"},
                   {"User-Agent", "custom/1"},
                   {"Accept", "text/plain"}};
  first.timeout = seconds(20);
  SendResult r = SendAndWait(sender, first);
  ASSERT_EQ(r.outcome.status_code, 200) << r.error_detail;

  // Same host and port, without allow_private: refused, although a connection to it is open.
  SendRequest second = Post(sink.url("/two"), "second");
  second.headers = {};
  r = SendAndWait(sender, second);
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << r.error_detail;
  EXPECT_EQ(r.error_detail, Refusal("127.0.0.1"));
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_EQ(sink.RequestCount(), 1u);

  // Allowed again, with none of the first request's headers.
  SendRequest third = Post(sink.url("/three"), "3");
  third.allow_private = true;
  third.headers = {};
  r = SendAndWait(sender, third);
  ASSERT_EQ(r.outcome.status_code, 200) << r.error_detail;
  ASSERT_EQ(sink.RequestCount(), 2u);
  const SinkRequest got = sink.Requests()[1];
  EXPECT_EQ(got.path, "/three");
  EXPECT_EQ(got.body, "3");
  EXPECT_EQ(got.Header("Content-Length"), "1");
  EXPECT_FALSE(got.Header("X-Custom").has_value());
  EXPECT_FALSE(got.Header("Content-Type").has_value());
  EXPECT_FALSE(got.Header("Accept").has_value());
  EXPECT_EQ(got.Header("User-Agent"), std::string("hookrelay/") + HOOKRELAY_VERSION);
  EXPECT_EQ(sink.Requests()[0].Header("User-Agent"), "custom/1");
  EXPECT_EQ(sink.Requests()[0].Header("X-Custom"), "one");

  // A short timeout after a long one, then a long one after the short one.
  sink.Enqueue(SinkResponse::Status(200).WithDelay(seconds(20)));
  SendRequest short_one = Post(sink.url("/short"));
  short_one.allow_private = true;
  short_one.timeout = milliseconds(300);
  r = SendAndWait(sender, short_one);
  EXPECT_EQ(r.outcome.error, TransportError::kTimeout) << r.error_detail;  // not the 20 s answer
  sink.Enqueue(SinkResponse::Status(200).WithDelay(milliseconds(800)));
  SendRequest long_one = Post(sink.url("/long"));
  long_one.allow_private = true;
  long_one.timeout = seconds(20);
  r = SendAndWait(sender, long_one);
  EXPECT_EQ(r.outcome.status_code, 200) << r.error_detail;
  EXPECT_EQ(sender.InFlight(), 0);
}

// A handle that carried an unusually large header list (its buffers are then let go) carries
// the next, small one correctly, and the other way round.
TEST(SenderTest, LargeAndSmallHeaderListsOnOneHandle) {
  Sink sink;
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  const std::string big(20000, 'v');
  for (int i = 0; i < 4; ++i) {
    SendRequest request = Post(sink.url("/h"), std::to_string(i));
    if (i % 2 == 0) request.headers.emplace_back("X-Big", big);
    request.headers.emplace_back("X-N", std::to_string(i));
    ASSERT_EQ(SendAndWait(sender, request).outcome.status_code, 200);
  }
  ASSERT_EQ(sink.RequestCount(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const SinkRequest got = sink.Requests()[i];
    EXPECT_EQ(got.body, std::to_string(i));
    EXPECT_EQ(got.Header("X-N"), std::to_string(i));
    EXPECT_EQ(got.Header("Content-Type"), "application/json");
    if (i % 2 == 0) {
      EXPECT_EQ(got.Header("X-Big"), big);
    } else {
      EXPECT_FALSE(got.Header("X-Big").has_value());
    }
  }
}

// A connection opened for a destination that may use private addresses is not lent to one that
// may not, whichever handle carries the request: the guard also judges the address of a reused
// connection before the request is sent.
TEST(SenderTest, AnAllowedConnectionIsNotReusedForARefusedRequest) {
  Sink sink;
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());
  // Several allowed requests at once leave several connections and handles behind.
  std::vector<std::future<SendResult>> allowed;
  for (int i = 0; i < 4; ++i) {
    auto promise = std::make_shared<std::promise<SendResult>>();
    allowed.push_back(promise->get_future());
    SendRequest request = Post(sink.url("/a"));
    request.allow_private = true;
    sender.Send(std::move(request), [promise](SendResult r) { promise->set_value(std::move(r)); });
  }
  for (auto& f : allowed) {
    ASSERT_EQ(f.wait_for(kWait), std::future_status::ready);
    EXPECT_EQ(f.get().outcome.status_code, 200);
  }
  for (int i = 0; i < 4; ++i) {
    SendResult r = SendAndWait(sender, Post(sink.url("/refused")));
    EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << r.error_detail;
    EXPECT_EQ(r.error_detail, Refusal("127.0.0.1"));
  }
  EXPECT_EQ(sink.RequestCount(), 4u);
  // The connections still serve allowed requests.
  SendRequest request = Post(sink.url("/a"));
  request.allow_private = true;
  EXPECT_EQ(SendAndWait(sender, request).outcome.status_code, 200);
}

TEST(SenderTest, PrivateAddressRefusedByDefault) {
  Sink sink;
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post(sink.url()));
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress);
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_EQ(r.error_detail, Refusal("127.0.0.1"));
  EXPECT_EQ(sink.RequestCount(), 0u);
  EXPECT_EQ(sink.ConnectionCount(), 0u);
}

TEST(SenderTest, PrivateAddressAllowedPerRequest) {
  Sink sink;
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());
  SendRequest request = Post(sink.url());
  request.allow_private = true;
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.status_code, 200) << r.error_detail;
  EXPECT_EQ(sink.RequestCount(), 1u);
}

TEST(SenderTest, NameResolvingToLoopbackIsRefused) {
  Sink sink;
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post("http://localhost:" + std::to_string(sink.port()) + "/"));
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << r.error_detail;
  EXPECT_TRUE(r.error_detail == Refusal("127.0.0.1") || r.error_detail == Refusal("::1"))
      << r.error_detail;
  EXPECT_EQ(sink.ConnectionCount(), 0u);

  // Other spellings of loopback are judged by the address they resolve to, too.
  r = SendAndWait(sender, Post("http://127.1:" + std::to_string(sink.port()) + "/"));
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << r.error_detail;
  r = SendAndWait(sender, Post("http://[::ffff:127.0.0.1]:" + std::to_string(sink.port()) + "/"));
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << r.error_detail;
  EXPECT_EQ(sink.ConnectionCount(), 0u);
}

TEST(SenderTest, OnlyHttpAndHttpsSchemes) {
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendResult r = SendAndWait(sender, Post("file:///etc/passwd"));
  EXPECT_EQ(r.outcome.error, TransportError::kOther);
  EXPECT_FALSE(r.error_detail.empty());
  EXPECT_TRUE(r.snippet.empty());
}

TEST(SenderTest, TlsHandshakeFailureIsTls) {
  // A plain-HTTP answer where a TLS handshake is expected. (The sink waits for a request head,
  // which a ClientHello never completes; a raw server is simpler.)
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::thread server([fd] {
    int c = accept(fd, nullptr, nullptr);
    if (c < 0) return;
    const char kAnswer[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    (void)!write(c, kAnswer, sizeof(kAnswer) - 1);
    char buf[4096];
    while (read(c, buf, sizeof(buf)) > 0) {
    }
    close(c);
  });
  SendResult r =
      SendAndWait(sender, Post("https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"));
  EXPECT_EQ(r.outcome.error, TransportError::kTls) << r.error_detail;
  server.join();
  close(fd);
}

// Through a proxy the socket goes to the proxy (the sink, on loopback, standing in for an
// operator's egress proxy): not refused. A destination given as a private literal is still
// refused before anything is sent; no_proxy hosts connect directly.
TEST(SenderTest, ProxyFromEnvironment) {
  Sink proxy;
  Sink direct;
  ScopedEnv env({{"http_proxy", proxy.url("").c_str()}, {"no_proxy", "example.org, 127.0.0.1"}});
  HttpSender sender(HttpSender::Options{}, SystemClock::Instance());

  SendResult r = SendAndWait(sender, Post("http://hooks.example.test/in?a=b"));
  EXPECT_EQ(r.outcome.status_code, 200) << r.error_detail;
  ASSERT_EQ(proxy.RequestCount(), 1u);
  EXPECT_EQ(proxy.Requests()[0].target, "http://hooks.example.test/in?a=b");
  EXPECT_EQ(proxy.Requests()[0].Header("Host"), "hooks.example.test");

  r = SendAndWait(sender, Post("http://10.1.2.3/x"));
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress);
  EXPECT_EQ(r.error_detail, Refusal("10.1.2.3"));
  for (const char* url : {"http://localhost/x", "http://a.localhost/x", "http://127.1/x",
                          "http://0x7f000001/x", "http://[::1]/x", "http://[::ffff:10.0.0.1]/x",
                          "http://169.254.169.254/latest/meta-data"}) {
    r = SendAndWait(sender, Post(url));
    EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress) << url;
  }
  EXPECT_EQ(proxy.RequestCount(), 1u);

  // no_proxy: straight to the destination, where the guard applies again.
  SendRequest request = Post(direct.url("/d"));
  r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.error, TransportError::kPrivateAddress);
  request.allow_private = true;
  r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.status_code, 200) << r.error_detail;
  EXPECT_EQ(direct.RequestCount(), 1u);
  EXPECT_EQ(proxy.RequestCount(), 1u);
}

// Issue 14: a response whose Content-Length is past 1 MiB (50 MiB here) is read only as far as
// the snippet needs, then the connection is dropped: the attempt counts with its status at once.
// The server sends the head and 64 KiB, then nothing more; a sender that kept reading (the drain
// of up to 1 MiB it used to do) waited for the rest until its timeout.
TEST(SenderTest, HugeContentLengthIsCutOnceTheSnippetIsFull) {
  RawResponder server(
      {"HTTP/1.1 200 OK\r\nContent-Length: 52428800\r\n\r\n" + std::string(64 * 1024, 'y')},
      milliseconds(0));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  SendRequest request = Post(server.url());
  request.timeout = seconds(5);
  SendResult r = SendAndWait(sender, request);
  EXPECT_EQ(r.outcome.error, TransportError::kNone) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.snippet, std::string(4096, 'y'));
}

// A body of known length up to 1 MiB is still read to its end (past the snippet), so the
// connection is reused for the next request.
TEST(SenderTest, SmallContentLengthIsDrainedAndTheConnectionKept) {
  Sink sink;
  sink.SetDefault(SinkResponse::Status(200, std::string(512 * 1024, 'z')));
  HttpSender sender(AllowPrivate(), SystemClock::Instance());
  for (int i = 0; i < 3; ++i) {
    SendResult r = SendAndWait(sender, Post(sink.url()));
    EXPECT_EQ(r.outcome.error, TransportError::kNone) << r.error_detail;
    EXPECT_EQ(r.outcome.status_code, 200);
    EXPECT_EQ(r.snippet, std::string(4096, 'z'));
  }
  EXPECT_EQ(sink.RequestCount(), 3u);
  EXPECT_EQ(sink.ConnectionCount(), 1u);
}

}  // namespace
}  // namespace hookrelay::delivery
