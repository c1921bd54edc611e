#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "support/http_client.h"
#include "support/wait.h"

namespace hookrelay::http {
namespace {

using hookrelay::testing::CountResponses;
using hookrelay::testing::HttpConnection;
using hookrelay::testing::HttpResponse;
using hookrelay::testing::RawConnection;
using hookrelay::testing::SendRaw;
using hookrelay::testing::StatusOf;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

milliseconds Since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
}

std::string JoinSegments(const std::vector<std::string>& segments) {
  std::string out;
  for (const auto& s : segments) out += "[" + s + "]";
  return out;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Accepts every head; answers by echoing the body with the request's shape in headers.
// `on_head` / `on_request` override that; they are set before the server starts.
class TestHandler : public Handler {
 public:
  HeadDecision OnHead(const RequestHead& head) override {
    ++heads;
    if (on_head) return on_head(head);
    return {};
  }
  void OnRequest(Request request, Responder respond) override {
    ++requests;
    if (on_request) {
      on_request(std::move(request), std::move(respond));
      return;
    }
    respond(Echo(request));
  }

  static Response Echo(const Request& request) {
    Response r;
    r.content_type = "application/octet-stream";
    r.headers = {
        {"X-Method", request.method},
        {"X-Path", request.path},
        {"X-Segments", JoinSegments(request.segments)},
        {"X-Query", request.query},
        {"X-Remote-Port", std::to_string(request.remote_port)},
        {"X-Content-Length",
         request.content_length ? std::to_string(*request.content_length) : std::string("none")},
        {"X-Chunked", request.chunked ? "yes" : "no"}};
    r.body = request.body;
    return r;
  }

  std::function<HeadDecision(const RequestHead&)> on_head;
  std::function<void(Request, Responder)> on_request;
  std::atomic<int> heads{0};
  std::atomic<int> requests{0};
};

// Collects requests with their Responders so a test can answer them later, from its own thread.
class Deferred {
 public:
  void Add(Request request, Responder respond) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.emplace_back(std::move(request), std::move(respond));
    cv_.notify_all();
  }
  // Waits (bounded) for the next pending request.
  std::optional<std::pair<Request, Responder>> Take(milliseconds wait = seconds(5)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, wait, [&] { return !pending_.empty(); })) return std::nullopt;
    auto item = std::move(pending_.front());
    pending_.pop_front();
    return item;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<Request, Responder>> pending_;
};

class ServerTest : public ::testing::Test {
 protected:
  static ServerOptions Options() {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.threads = 2;
    return o;
  }
  void StartServer(const ServerOptions& options = Options()) {
    auto started = Server::Start(options, handler_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(started).value();
  }
  uint16_t port() const { return server_->port(); }

  TestHandler handler_;  // outlives server_
  std::unique_ptr<Server> server_;
};

TEST(JsonErrorTest, HasCodeMessageAndOptionalField) {
  Response r = JsonError(404, "not_found", "no source \"x\"", "source");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "application/json");
  auto v = boost::json::parse(r.body);
  EXPECT_EQ(v.at("error").at("code").as_string(), "not_found");
  EXPECT_EQ(v.at("error").at("message").as_string(), "no source \"x\"");
  EXPECT_EQ(v.at("error").at("field").as_string(), "source");

  auto no_field = boost::json::parse(JsonError(400, "bad_request", "x").body);
  EXPECT_FALSE(no_field.at("error").as_object().contains("field"));
}

TEST(PathTest, DecodesSegments) {
  std::vector<std::string> s;
  ASSERT_TRUE(DecodePathSegments("/", s));
  EXPECT_TRUE(s.empty());
  ASSERT_TRUE(DecodePathSegments("/in/my%20src/a%2Fb/", s));
  EXPECT_EQ(s, (std::vector<std::string>{"in", "my src", "a/b", ""}));
  ASSERT_TRUE(DecodePathSegments("/a+b//%00", s));
  EXPECT_EQ(s, (std::vector<std::string>{"a+b", "", std::string("\0", 1)}));
  EXPECT_FALSE(DecodePathSegments("/bad%zz", s));
  EXPECT_FALSE(DecodePathSegments("/bad%4", s));
  EXPECT_FALSE(DecodePathSegments("/bad%", s));
}

TEST(RequestHeadTest, LooksUpHeadersAndQueryParams) {
  RequestHead head;
  head.headers = {{"X-B", "1"}, {"x-a", "2"}, {"X-B", "3"}};
  head.query = "a=1&name=J%C3%B6rg+X&empty=&flag&a=2";
  EXPECT_EQ(head.Header("x-b"), "1");
  EXPECT_EQ(head.Header("X-A"), "2");
  EXPECT_EQ(head.Header("missing"), std::nullopt);
  EXPECT_EQ(head.QueryParam("a"), "1");
  EXPECT_EQ(head.QueryParam("name"), "J\xC3\xB6rg X");
  EXPECT_EQ(head.QueryParam("empty"), "");
  EXPECT_EQ(head.QueryParam("flag"), "");
  EXPECT_EQ(head.QueryParam("nope"), std::nullopt);
}

TEST_F(ServerTest, ServesOnAFreePortAndReportsUrl) {
  StartServer();
  ASSERT_NE(port(), 0);
  EXPECT_EQ(server_->url(), "http://127.0.0.1:" + std::to_string(port()));
  HttpConnection c(port());
  HttpResponse r = c.Send("GET", "/hello?x=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "application/octet-stream");
  EXPECT_EQ(r.Header("Content-Length"), "0");
  EXPECT_EQ(r.Header("X-Path"), "/hello");
  EXPECT_EQ(r.Header("X-Query"), "x=1");
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.HasHeader("Connection"));
}

TEST_F(ServerTest, ListenErrorNamesTheAddress) {
  StartServer();
  ServerOptions again = Options();
  again.listen = "127.0.0.1:" + std::to_string(port());
  auto second = Server::Start(again, handler_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message(),
            "cannot listen on " + again.listen + ": address already in use");

  again.listen = "nonsense";
  auto bad = Server::Start(again, handler_);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(bad.status().message(), "\"nonsense\"")) << bad.status().message();

  again.listen = "127.0.0.1:0";
  again.threads = 0;
  EXPECT_FALSE(Server::Start(again, handler_).ok());
}

TEST_F(ServerTest, ListensOnIpv6Loopback) {
  ServerOptions o = Options();
  o.listen = "[::1]:0";
  auto started = Server::Start(o, handler_);
  if (!started.ok()) GTEST_SKIP() << "no IPv6 loopback: " << started.status().ToString();
  server_ = std::move(started).value();
  EXPECT_EQ(server_->url(), "http://[::1]:" + std::to_string(port()));
  HttpConnection c(port(), "::1");
  EXPECT_EQ(c.Send("GET", "/").status, 200);
}

TEST_F(ServerTest, KeepAliveCarriesSeveralRequestsOnOneConnection) {
  StartServer();
  HttpConnection c(port());
  std::set<std::string> remote_ports;
  for (int i = 0; i < 5; ++i) {
    HttpResponse r = c.Send("POST", "/n/" + std::to_string(i), {}, "body" + std::to_string(i));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "body" + std::to_string(i));
    EXPECT_TRUE(r.keep_alive);
    remote_ports.insert(r.Header("X-Remote-Port"));
  }
  EXPECT_EQ(remote_ports.size(), 1u);  // all on one connection

  HttpResponse last = c.Send("GET", "/bye", {{"Connection", "close"}});
  EXPECT_EQ(last.status, 200);
  EXPECT_EQ(last.Header("Connection"), "close");
  EXPECT_TRUE(c.WaitForClose(seconds(5)));
}

TEST_F(ServerTest, Http10ClosesAfterTheResponseUnlessAskedToKeepAlive) {
  StartServer();
  RawConnection c(port());
  c.Write("GET /old HTTP/1.0\r\n\r\n");
  std::string raw = c.ReadUntilClose(seconds(5));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(StatusOf(raw), 200);
  EXPECT_TRUE(Contains(raw, "Connection: close\r\n"));

  RawConnection k(port());
  k.Write("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  std::string first = k.ReadUntil("\r\n\r\n", seconds(5));
  EXPECT_TRUE(Contains(first, "Connection: keep-alive\r\n"));
  k.Write("GET /b HTTP/1.0\r\n\r\n");
  std::string second = k.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(second), 200);
  EXPECT_TRUE(Contains(second, "X-Path: /b"));
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  RawConnection c(port());
  c.Write(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz"
      "GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string raw = c.ReadUntilClose(seconds(5));
  size_t a = raw.find("X-Path: /a"), b = raw.find("X-Path: /b"), cc = raw.find("X-Path: /c");
  ASSERT_NE(a, std::string::npos) << raw;
  ASSERT_NE(b, std::string::npos) << raw;
  ASSERT_NE(cc, std::string::npos) << raw;
  EXPECT_LT(a, b);
  EXPECT_LT(b, cc);
  EXPECT_TRUE(Contains(raw, "\r\n\r\nxyz"));
  EXPECT_EQ(handler_.requests.load(), 3);
}

TEST_F(ServerTest, HeadCarriesFieldsInOrderAndDecodedPath) {
  std::mutex mu;
  std::optional<RequestHead> seen;
  handler_.on_head = [&](const RequestHead& head) {
    std::lock_guard<std::mutex> lock(mu);
    seen = head;
    return Handler::HeadDecision{};
  };
  StartServer();
  HttpConnection c(port());
  HttpResponse r = c.Send("GET", "/in/my%20src/a%2Fb/?q=1&name=J%C3%B6rg+X",
                          {{"X-B", "1"}, {"x-a", "2"}, {"X-B", "3"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("X-Segments"), "[in][my src][a/b][]");
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_TRUE(seen.has_value());
  const RequestHead& h = *seen;
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.version, 11);
  EXPECT_EQ(h.target, "/in/my%20src/a%2Fb/?q=1&name=J%C3%B6rg+X");
  EXPECT_EQ(h.path, "/in/my%20src/a%2Fb/");
  EXPECT_EQ(h.segments, (std::vector<std::string>{"in", "my src", "a/b", ""}));
  EXPECT_EQ(h.query, "q=1&name=J%C3%B6rg+X");
  EXPECT_EQ(h.QueryParam("name"), "J\xC3\xB6rg X");
  ASSERT_EQ(h.headers.size(), 4u);
  EXPECT_EQ(h.headers[0].first, "Host");
  EXPECT_EQ(h.headers[1], (std::pair<std::string, std::string>{"X-B", "1"}));
  EXPECT_EQ(h.headers[2], (std::pair<std::string, std::string>{"x-a", "2"}));
  EXPECT_EQ(h.headers[3], (std::pair<std::string, std::string>{"X-B", "3"}));
  EXPECT_EQ(h.Header("x-b"), "1");
  EXPECT_EQ(h.remote_address, "127.0.0.1");
  EXPECT_NE(h.remote_port, 0);
  EXPECT_EQ(h.content_length, std::nullopt);
  EXPECT_FALSE(h.chunked);
}

TEST_F(ServerTest, AbsoluteFormTargetAndBadEncoding) {
  StartServer();
  HttpConnection c(port());
  HttpResponse r = c.Send("GET", "http://example.com/x/y?z=1");
  EXPECT_EQ(r.Header("X-Path"), "/x/y");
  EXPECT_EQ(r.Header("X-Query"), "z=1");
  HttpResponse bad = c.Send("GET", "/in/%zz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(Contains(bad.body, "percent-encoding")) << bad.body;
  EXPECT_FALSE(bad.keep_alive);
}

TEST_F(ServerTest, BodiesAreByteExact) {
  StartServer();
  HttpConnection c(port());
  std::string binary;
  for (int round = 0; round < 4; ++round) {
    for (int b = 0; b < 256; ++b) binary.push_back(static_cast<char>(b));
  }
  HttpResponse r = c.Send("POST", "/bin", {{"Content-Type", "application/octet-stream"}}, binary);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, binary);

  std::string big(5 * 1024 * 1024, '\0');  // exactly the default limit
  std::mt19937_64 rng(42);
  for (auto& ch : big) ch = static_cast<char>(rng());
  HttpResponse large = c.Send("POST", "/big", {}, big);
  EXPECT_EQ(large.status, 200);
  EXPECT_EQ(large.Header("X-Content-Length"), std::to_string(big.size()));
  EXPECT_TRUE(large.body == big);
  // The connection is still good after a large body.
  EXPECT_EQ(c.Send("GET", "/after").status, 200);
}

TEST_F(ServerTest, EmptyBodies) {
  StartServer();
  HttpConnection c(port());
  HttpResponse r = c.Send("POST", "/empty", {{"Content-Length", "0"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.Header("X-Content-Length"), "0");

  // No Content-Length and no chunking: the request has no body.
  std::string raw = SendRaw(port(), "POST /none HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200);
  EXPECT_TRUE(Contains(raw, "X-Content-Length: none\r\n"));
  EXPECT_TRUE(Contains(raw, "Content-Length: 0\r\n"));
}

TEST_F(ServerTest, ChunkedBodyIsReassembled) {
  StartServer();
  std::string raw = SendRaw(port(),
                            "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                            "Connection: close\r\n\r\n"
                            "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200) << raw;
  EXPECT_TRUE(Contains(raw, "X-Chunked: yes\r\n"));
  EXPECT_TRUE(Contains(raw, "\r\n\r\nhello world"));
}

TEST_F(ServerTest, RejectionInOnHeadIsSentWithoutReadingTheBody) {
  handler_.on_head = [](const RequestHead& head) {
    Handler::HeadDecision d;
    if (!head.segments.empty() && head.segments[0] == "missing") {
      d.reject = JsonError(404, "not_found", "no such source", "source");
    }
    return d;
  };
  ServerOptions o = Options();
  o.body_timeout = std::chrono::minutes(10);
  StartServer(o);
  // A body is announced but never sent: the answer must not wait for it (an answer within the
  // 60 s bound on a hang is not the body timeout's, 10 min).
  RawConnection c(port());
  c.Write("POST /missing HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n");
  std::string raw = c.ReadUntilClose(seconds(60));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(StatusOf(raw), 404) << raw;
  EXPECT_TRUE(Contains(raw, "Connection: close\r\n"));
  EXPECT_TRUE(Contains(raw, "\"field\":\"source\""));
  EXPECT_EQ(handler_.requests.load(), 0);

  // Without a body the connection stays usable.
  HttpConnection k(port());
  HttpResponse r = k.Send("GET", "/missing");
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(r.keep_alive);
  EXPECT_EQ(k.Send("GET", "/present").status, 200);
}

TEST_F(ServerTest, ContentLengthOverTheHandlersLimitGets413BeforeTheBody) {
  handler_.on_head = [](const RequestHead&) {
    Handler::HeadDecision d;
    d.body_limit = 100;
    return d;
  };
  StartServer();
  RawConnection c(port());
  c.Write("POST /in/s HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n");
  std::string raw = c.ReadUntilClose(seconds(5));
  EXPECT_TRUE(c.closed());
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "payload_too_large"));
  EXPECT_TRUE(Contains(raw, "100B")) << raw;
  EXPECT_EQ(handler_.requests.load(), 0);

  HttpConnection ok(port());
  EXPECT_EQ(ok.Send("POST", "/in/s", {}, std::string(100, 'a')).status, 200);
}

TEST_F(ServerTest, ChunkedBodyOverTheLimitGets413) {
  handler_.on_head = [](const RequestHead&) {
    Handler::HeadDecision d;
    d.body_limit = 10;
    return d;
  };
  StartServer();
  std::string raw = SendRaw(port(),
                            "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "10B")) << raw;
  EXPECT_EQ(handler_.requests.load(), 0);
}

TEST_F(ServerTest, DefaultBodyLimitApplies) {
  ServerOptions o = Options();
  o.default_body_limit = 1000;
  StartServer(o);
  HttpConnection c(port());
  EXPECT_EQ(c.Send("POST", "/x", {}, std::string(1000, 'a')).status, 200);
  HttpResponse r = c.Send("POST", "/x", {}, std::string(1001, 'a'));
  EXPECT_EQ(r.status, 413);
  EXPECT_FALSE(r.keep_alive);
}

TEST_F(ServerTest, ExpectContinueGets100ThenTheFinalResponse) {
  handler_.on_head = [](const RequestHead& head) {
    Handler::HeadDecision d;
    if (head.path == "/missing") d.reject = JsonError(404, "not_found", "no");
    return d;
  };
  StartServer();
  RawConnection c(port());
  c.Write("POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  std::string interim = c.ReadUntil("\r\n\r\n", seconds(20));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  c.Write("hello");
  std::string final_response = c.ReadUntil("hello", seconds(5));
  EXPECT_EQ(StatusOf(final_response), 200) << final_response;

  // A rejected head gets the final answer at once, and no 100.
  RawConnection r(port());
  r.Write("POST /missing HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  std::string raw = r.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(raw), 404) << raw;
  EXPECT_FALSE(Contains(raw, "100 Continue"));
}

TEST_F(ServerTest, OversizedHeadersGet431) {
  ServerOptions o = Options();
  o.header_limit = 1024;
  StartServer(o);
  std::string raw =
      SendRaw(port(), "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 431) << raw;
  EXPECT_TRUE(Contains(raw, "request headers too large"));
  EXPECT_TRUE(Contains(raw, "Connection: close\r\n"));

  // A head that never ends is cut off at the limit too, without waiting for its end.
  RawConnection c(port());
  c.Write("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a'));
  EXPECT_EQ(StatusOf(c.ReadUntilClose(seconds(5))), 431);

  HttpConnection ok(port());
  EXPECT_EQ(ok.Send("GET", "/", {{"X-Fits", std::string(800, 'b')}}).status, 200);
}

TEST_F(ServerTest, MalformedRequestsGet400AndTheServerKeepsServing) {
  StartServer();
  for (const char* bad :
       {"NOT HTTP AT ALL\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "zz\r\nhello\r\n0\r\n\r\n",
        // Ambiguous framing (request smuggling) is refused.
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
        "Content-Length: 6\r\n\r\nhello!"}) {
    std::string raw = SendRaw(port(), bad);
    EXPECT_EQ(StatusOf(raw), 400) << bad << " → " << raw;
    EXPECT_TRUE(Contains(raw, "\"code\":\"bad_request\"")) << raw;
    EXPECT_TRUE(Contains(raw, "Content-Type: application/json\r\n"));
  }
  HttpConnection c(port());
  EXPECT_EQ(c.Send("GET", "/still-fine").status, 200);
  EXPECT_EQ(handler_.requests.load(), 1);
}

TEST_F(ServerTest, TricklingHeadersAreCutOffAfterHeaderTimeout) {
  ServerOptions o = Options();
  o.header_timeout = milliseconds(200);
  StartServer(o);
  RawConnection c(port());
  auto start = SteadyClock::now();
  c.Write("GET / HTTP/1.1\r\n");
  std::string got;
  // Keep sending a header line every 50ms, never ending the head: a per-read timeout would never
  // fire, so the answer must come while the client is still trickling (the 30 s is only how long
  // this client keeps at it before the test gives up).
  bool answered_while_trickling = false;
  int lines = 0;
  while (Since(start) < seconds(30) && !c.closed()) {
    c.Write("X-Slow: 1\r\n");
    ++lines;
    got = c.ReadUntil("\r\n\r\n", milliseconds(50));
    if (!got.empty()) {
      answered_while_trickling = true;
      break;
    }
  }
  ASSERT_TRUE(answered_while_trickling) << "the server waited for the end of the head";
  got += c.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(got), 408) << got;
  EXPECT_TRUE(Contains(got, "request_timeout"));
  EXPECT_TRUE(c.closed());
  EXPECT_GE(Since(start), milliseconds(190));  // not before the timeout
  EXPECT_GE(lines, 2);                         // the client was still sending after the first line
  EXPECT_EQ(handler_.heads.load(), 0);
}

TEST_F(ServerTest, SlowBodyIsCutOffAfterBodyTimeout) {
  ServerOptions o = Options();
  o.body_timeout = milliseconds(200);
  StartServer(o);
  RawConnection c(port());
  auto start = SteadyClock::now();
  c.Write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
  std::string got = c.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(got), 408) << got;
  EXPECT_TRUE(Contains(got, "request body not received within 200ms")) << got;
  EXPECT_TRUE(c.closed());
  EXPECT_GE(Since(start), milliseconds(190));
  EXPECT_EQ(handler_.requests.load(), 0);
}

TEST_F(ServerTest, IdleConnectionsAreClosed) {
  ServerOptions o = Options();
  o.idle_timeout = milliseconds(200);
  o.header_timeout = milliseconds(300);
  StartServer(o);
  HttpConnection c(port());
  EXPECT_EQ(c.Send("GET", "/").status, 200);
  auto start = SteadyClock::now();
  EXPECT_TRUE(c.WaitForClose(seconds(5)));
  EXPECT_GE(Since(start), milliseconds(150));

  // A connection that never sends a byte is closed after header_timeout, silently.
  RawConnection silent(port());
  start = SteadyClock::now();
  EXPECT_EQ(silent.ReadUntilClose(seconds(5)), "");
  EXPECT_TRUE(silent.closed());
  EXPECT_GE(Since(start), milliseconds(250));
}

TEST_F(ServerTest, ResponderMayAnswerLaterFromAnotherThread) {
  Deferred deferred;
  handler_.on_request = [&](Request r, Responder respond) {
    deferred.Add(std::move(r), std::move(respond));
  };
  StartServer();
  auto client = std::async(std::launch::async, [&] {
    HttpConnection c(port());
    HttpResponse first = c.Send("POST", "/a", {}, "one");
    HttpResponse second = c.Send("POST", "/b", {}, "two");
    return std::make_pair(first, second);
  });
  for (int i = 0; i < 2; ++i) {
    auto item = deferred.Take();
    ASSERT_TRUE(item.has_value());
    // As a store would after a group commit: some time later, on this thread (the delay is the
    // subject: the answers must keep their order although they come late).
    std::this_thread::sleep_for(milliseconds(30));
    Response r;
    r.status = 202;
    r.body = "{\"id\":\"" + item->first.body + "\"}";
    item->second(std::move(r));
  }
  auto [first, second] = client.get();
  EXPECT_EQ(first.status, 202);
  EXPECT_EQ(first.body, "{\"id\":\"one\"}");
  EXPECT_EQ(second.body, "{\"id\":\"two\"}");
}

TEST_F(ServerTest, LateOrRepeatedResponderCallsAreHarmless) {
  Deferred deferred;
  handler_.on_request = [&](Request r, Responder respond) {
    if (r.path == "/now") {
      Responder copy = respond;
      respond(TestHandler::Echo(r));
      Response second;
      second.body = "second";
      copy(std::move(second));  // ignored: the first call won
      return;
    }
    deferred.Add(std::move(r), std::move(respond));
  };
  StartServer();
  std::optional<std::pair<Request, Responder>> item;
  {
    RawConnection gone(port());
    gone.Write("GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    item = deferred.Take();
    ASSERT_TRUE(item.has_value());
  }
  // The client has left before the answer comes.
  item->second(Response{});
  HttpConnection c(port());
  HttpResponse r = c.Send("GET", "/now");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(c.Send("GET", "/now").status, 200);  // no stray second response on the wire
}

TEST_F(ServerTest, DroppedResponderOrThrowingHandlerAnswers500) {
  handler_.on_head = [](const RequestHead& head) -> Handler::HeadDecision {
    if (head.path == "/throw-head") throw std::runtime_error("boom");
    return {};
  };
  handler_.on_request = [](Request r, Responder) {
    if (r.path == "/throw") throw std::runtime_error("boom");
    // Otherwise drop the responder without calling it.
  };
  StartServer();
  HttpConnection c(port());
  for (const char* path : {"/drop", "/throw", "/throw-head"}) {
    HttpResponse r = c.Send("GET", path);
    EXPECT_EQ(r.status, 500) << path;
    EXPECT_TRUE(Contains(r.body, "\"code\":\"internal\"")) << r.body;
  }
}

TEST_F(ServerTest, ResponseCarriesHandlerFieldsButNotUnsafeOnes) {
  handler_.on_request = [](Request r, Responder respond) {
    Response resp;
    if (r.path == "/nocontent") {
      resp.status = 204;
      resp.body = "ignored";
      respond(std::move(resp));
      return;
    }
    resp.status = 201;
    resp.content_type = "text/plain";
    resp.headers = {
        {"X-Id", "7"}, {"X-Bad", "a\r\nInjected: 1"}, {"Content-Length", "999"}, {"Bad Name", "x"}};
    resp.body = "created";
    respond(std::move(resp));
  };
  StartServer();
  HttpConnection c(port());
  HttpResponse r = c.Send("POST", "/x", {}, "");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.Header("X-Id"), "7");
  EXPECT_FALSE(r.HasHeader("X-Bad"));
  EXPECT_FALSE(r.HasHeader("Injected"));
  EXPECT_EQ(r.Header("Content-Length"), "7");
  EXPECT_EQ(r.Header("Content-Type"), "text/plain");
  EXPECT_EQ(r.body, "created");

  HttpResponse none = c.Send("GET", "/nocontent");
  EXPECT_EQ(none.status, 204);
  EXPECT_FALSE(none.HasHeader("Content-Length"));
  EXPECT_EQ(none.body, "");
  EXPECT_EQ(c.Send("GET", "/x").status, 201);  // framing intact
}

TEST_F(ServerTest, HeadRequestGetsTheHeadOnly) {
  handler_.on_request = [](Request, Responder respond) {
    Response r;
    r.body = "twelve bytes";
    respond(std::move(r));
  };
  StartServer();
  HttpConnection c(port());
  HttpResponse head = c.Send("HEAD", "/x");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.Header("Content-Length"), "12");
  EXPECT_EQ(head.body, "");
  HttpResponse get = c.Send("GET", "/x");  // would misparse if a body had been sent for HEAD
  EXPECT_EQ(get.body, "twelve bytes");
}

TEST_F(ServerTest, ShutdownWaitsForInFlightResponses) {
  Deferred deferred;
  handler_.on_request = [&](Request r, Responder respond) {
    deferred.Add(std::move(r), std::move(respond));
  };
  StartServer();
  const uint16_t p = port();
  HttpConnection idle(p);
  auto client = std::async(std::launch::async, [&] {
    HttpConnection c(p);
    return c.Send("POST", "/slow", {}, "x");
  });
  auto item = deferred.Take();
  ASSERT_TRUE(item.has_value());

  auto start = SteadyClock::now();
  // The grace period is far longer than the test: Shutdown returns once the response is out.
  auto shutdown =
      std::async(std::launch::async, [&] { server_->Shutdown(std::chrono::minutes(10)); });
  // New connections are refused once the acceptor is closed.
  bool refused = false;
  while (!refused && Since(start) < seconds(5)) {
    try {
      RawConnection probe(p);
    } catch (const std::runtime_error&) {
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(idle.WaitForClose(seconds(5)));  // idle connections are closed right away
  EXPECT_EQ(shutdown.wait_for(milliseconds(0)), std::future_status::timeout);

  item->second(Response{.status = 202, .body = "done"});
  HttpResponse r = client.get();
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.body, "done");
  EXPECT_FALSE(r.keep_alive);
  // 20 s bounds a hang; waiting for the grace period would take 10 min.
  ASSERT_EQ(shutdown.wait_for(seconds(20)), std::future_status::ready)
      << "Shutdown waited for its grace period, not for the in-flight response";
}

TEST_F(ServerTest, ShutdownGraceExpiresAndLateRespondersAreIgnored) {
  Deferred deferred;
  handler_.on_request = [&](Request r, Responder respond) {
    deferred.Add(std::move(r), std::move(respond));
  };
  StartServer();
  const uint16_t p = port();
  auto client = std::async(std::launch::async, [&] {
    HttpConnection c(p);
    try {
      c.Send("POST", "/never", {}, "x");
      return false;
    } catch (const std::runtime_error&) {
      return true;  // the connection was closed without an answer
    }
  });
  auto item = deferred.Take();
  ASSERT_TRUE(item.has_value());
  auto start = SteadyClock::now();
  // The response never comes: the grace period ends the shutdown (20 s bounds a hang).
  auto shutdown = std::async(std::launch::async, [&] { server_->Shutdown(milliseconds(100)); });
  ASSERT_EQ(shutdown.wait_for(seconds(20)), std::future_status::ready)
      << "the grace period did not end the shutdown";
  EXPECT_GE(Since(start), milliseconds(90));
  EXPECT_TRUE(client.get());

  server_.reset();
  item->second(Response{});  // after the Server is gone: ignored, no crash
}

TEST_F(ServerTest, ManyConcurrentKeepAliveClients) {
  StartServer();
  constexpr int kClients = 32;
  constexpr int kRequests = 200;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      try {
        HttpConnection c(port());
        for (int j = 0; j < kRequests; ++j) {
          std::string body = "client " + std::to_string(i) + " request " + std::to_string(j);
          HttpResponse r = c.Send("POST", "/c/" + std::to_string(i), {}, body);
          if (r.status == 200 && r.body == body &&
              r.Header("X-Path") == "/c/" + std::to_string(i)) {
            ++ok;
          }
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "client " << i << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
  EXPECT_EQ(handler_.requests.load(), kClients * kRequests);
}

TEST_F(ServerTest, ConnectionsBeyondTheLimitAreRefusedWhenNoneIsIdle) {
  ServerOptions o = Options();
  o.max_connections = 1;
  StartServer(o);
  // The one connection is in the middle of a request: it is not closed for a newcomer.
  RawConnection first(port());
  ASSERT_TRUE(first.Write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab"));
  // Wait until the server has read the head (the body's 4 bytes are then reserved): before
  // that, the connection has sent nothing the server saw and is idle, so it would make room.
  ASSERT_TRUE(test::WaitFor([&] { return server_->stats().body_memory_bytes.load() == 4; }));
  ASSERT_EQ(server_->stats().connections.load(), 1);

  RawConnection extra(port());
  extra.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string raw = extra.ReadUntilClose(seconds(20));
  EXPECT_EQ(StatusOf(raw), 503) << raw;
  EXPECT_TRUE(Contains(raw, "Retry-After: 1\r\n")) << raw;
  EXPECT_TRUE(Contains(raw, "max_connections 1")) << raw;
  EXPECT_TRUE(extra.closed());
  EXPECT_EQ(server_->stats().refused_max_connections.load(), 1u);

  ASSERT_TRUE(first.Write("cd"));
  EXPECT_EQ(StatusOf(first.ReadUntil("\r\n\r\n", seconds(20))), 200);

  // Once the first connection is gone, there is room again (the server notices asynchronously).
  first.ShutdownWrite();
  first.ReadUntilClose(seconds(20));
  EXPECT_TRUE(test::WaitFor([&] {
    return StatusOf(SendRaw(port(), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                            seconds(2))) == 200;
  }));
}

TEST_F(ServerTest, OldestIdleConnectionMakesRoomForANewOne) {
  ServerOptions o = Options();
  o.max_connections = 3;
  StartServer(o);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<RawConnection>(port()));
    // A request and its answer: the server has the connection (idle again, kept alive).
    ASSERT_TRUE(idle.back()->Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(StatusOf(idle.back()->ReadUntil("\r\n\r\n", seconds(5))), 200);
  }
  EXPECT_EQ(server_->stats().connections.load(), 3);
  {
    HttpConnection c(port());
    EXPECT_EQ(c.Send("GET", "/").status, 200);
  }
  idle[0]->ReadUntilClose(seconds(5));
  EXPECT_TRUE(idle[0]->closed()) << "the oldest idle connection was closed";
  EXPECT_FALSE(idle[1]->closed());
  EXPECT_EQ(server_->stats().idle_closed.load(), 1u);
  EXPECT_EQ(server_->stats().refused_max_connections.load(), 0u);
}

TEST_F(ServerTest, ConnectionsThatNeverSentARequestGiveWayFirst) {
  ServerOptions o = Options();
  o.threads = 1;
  o.max_connections = 3;
  StartServer(o);
  std::vector<std::unique_ptr<RawConnection>> used;
  for (int i = 0; i < 2; ++i) {
    used.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(used.back()->Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(StatusOf(used.back()->ReadUntil("\r\n\r\n", seconds(5))), 200);
  }
  RawConnection silent(port());
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().connections.load() >= 3; }));
  HttpConnection c(port());
  EXPECT_EQ(c.Send("GET", "/").status, 200);
  silent.ReadUntilClose(seconds(5));
  EXPECT_TRUE(silent.closed()) << "the connection that never sent a byte was closed";
  used[0]->ReadUntilClose(milliseconds(100));
  EXPECT_FALSE(used[0]->closed()) << "not the older keep-alive one";
}

TEST_F(ServerTest, ConnectionsPerClientAddressAreCapped) {
  ServerOptions o = Options();
  o.max_connections_per_client = 2;
  StartServer(o);
  RawConnection a(port(), "127.0.0.2"), b(port(), "127.0.0.2");
  for (RawConnection* c : {&a, &b}) {
    ASSERT_TRUE(c->Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_EQ(StatusOf(c->ReadUntil("\r\n\r\n", seconds(5))), 200);
  }
  RawConnection third(port(), "127.0.0.2");
  std::string raw = third.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(raw), 429) << raw;
  EXPECT_TRUE(Contains(raw, "too many connections from 127.0.0.2")) << raw;
  EXPECT_TRUE(Contains(raw, "Retry-After: 1\r\n")) << raw;
  EXPECT_EQ(server_->stats().refused_max_connections_per_client.load(), 1u);

  // Another address is not affected, and a closed connection frees its slot.
  HttpConnection other(port(), "127.0.0.1");
  EXPECT_EQ(other.Send("GET", "/").status, 200);
  a.ShutdownWrite();
  a.ReadUntilClose(seconds(5));
  bool served = false;
  auto start = SteadyClock::now();
  while (!served && Since(start) < seconds(5)) {
    RawConnection again(port(), "127.0.0.2");
    again.Write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    served = StatusOf(again.ReadUntilClose(seconds(2))) == 200;
  }
  EXPECT_TRUE(served);
}

TEST_F(ServerTest, Ipv6ClientsAreCountedTogether) {
  ServerOptions o = Options();
  o.listen = "[::1]:0";
  o.max_connections_per_client = 1;
  auto started = Server::Start(o, handler_);
  if (!started.ok()) GTEST_SKIP() << "no IPv6 loopback: " << started.status().ToString();
  server_ = std::move(started).value();
  HttpConnection first(port(), "::1");
  EXPECT_EQ(first.Send("GET", "/").status, 200);
  HttpConnection second(port(), "::1");
  HttpResponse r = second.Send("GET", "/");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.Header("Retry-After"), "1");
}

TEST_F(ServerTest, TransferEncodingOtherThanExactlyChunkedIs400) {
  StartServer();
  const std::string second = "GET /second HTTP/1.1\r\nHost: x\r\n\r\n";
  for (std::string te :
       {"gzip", "identity", "chunked, identity", "xchunked", "chunked, chunked", "gzip, chunked",
        "", "chunked;q=1", "chunked\r\nTransfer-Encoding: chunked",
        "gzip\r\nTransfer-Encoding: chunked", "gzip\r\nContent-Length: 3"}) {
    std::string raw =
        SendRaw(port(), "POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te + "\r\n\r\n" +
                            second);
    EXPECT_EQ(StatusOf(raw), 400) << te << " → " << raw;
    EXPECT_FALSE(Contains(raw, "/second")) << te << " → " << raw;
    EXPECT_TRUE(Contains(raw, "Connection: close\r\n")) << raw;
  }
  std::string raw =
      SendRaw(port(), "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 400) << raw;
  EXPECT_TRUE(Contains(raw, "HTTP/1.0")) << raw;
  EXPECT_EQ(handler_.requests.load(), 0);

  // Exactly chunked, in any case, with optional whitespace and empty list elements, is fine.
  for (std::string te : {"chunked", "CHUNKED", " \tChunked\t ", ", chunked,"}) {
    raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: " +
                              te + "\r\n\r\n1\r\na\r\n0\r\n\r\n");
    EXPECT_EQ(StatusOf(raw), 200) << te << " → " << raw;
  }
}

TEST_F(ServerTest, TrailersAreDroppedAndCountAgainstTheHeaderLimit) {
  ServerOptions o = Options();
  o.header_limit = 1024;
  StartServer(o);
  handler_.on_request = [](Request request, Responder respond) {
    Response r = TestHandler::Echo(request);
    std::string names;
    for (const auto& [name, value] : request.headers) names += name + ",";
    r.headers.emplace_back("X-Names", names);
    respond(std::move(r));
  };
  std::string raw = SendRaw(port(),
                            "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n"
                            "Host: evil\r\nX-Trailer: t\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200) << raw;
  EXPECT_TRUE(Contains(raw, "X-Names: Host,Connection,Transfer-Encoding,\r\n")) << raw;

  // 1 KiB of head and trailers together: a trailer section that fits alone does not fit after
  // a large head, and one that never ends is cut off at the limit.
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(600, 'p') +
                            "\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: " +
                            std::string(500, 't') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 431) << raw;
  EXPECT_TRUE(Contains(raw, "trailer fields too large")) << raw;
  RawConnection endless(port());
  endless.Write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
  for (int i = 0; i < 100 && endless.Write("X-T: " + std::string(100, 't') + "\r\n"); ++i) {
  }
  raw = endless.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(raw), 431) << raw;

  // Chunk extensions count too: one long one, or many short ones.
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;" +
                            std::string(2000, 'e') + "\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 400) << raw;
  EXPECT_TRUE(Contains(raw, "chunk extensions too long")) << raw;
  std::string chunks;
  for (int i = 0; i < 100; ++i) chunks += "1;e=" + std::string(20, 'x') + "\r\na\r\n";
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                            chunks + "0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 400) << raw;
  EXPECT_EQ(handler_.requests.load(), 1);
}

TEST_F(ServerTest, BodyMemoryIsBudgetedAndReleased) {
  ServerOptions o = Options();
  o.max_body_memory = 1000;
  StartServer(o);
  Deferred deferred;
  handler_.on_request = [&](Request request, Responder respond) {
    if (request.method == "GET") {
      respond(TestHandler::Echo(request));
      return;
    }
    deferred.Add(std::move(request), std::move(respond));
  };
  const std::string body(600, 'b');
  HttpConnection holder(port());
  auto answered =
      std::async(std::launch::async, [&] { return holder.Send("POST", "/", {}, body); });
  auto held = deferred.Take();
  ASSERT_TRUE(held);
  EXPECT_EQ(server_->stats().body_memory_bytes.load(), 600u);

  // The handler still holds the first body: a second does not fit once its bytes arrive (an
  // announced Content-Length alone takes nothing).
  std::string raw =
      SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n" + body);
  EXPECT_EQ(StatusOf(raw), 503) << raw;
  EXPECT_TRUE(Contains(raw, "Retry-After: 1\r\n")) << raw;
  EXPECT_TRUE(Contains(raw, "max_body_memory")) << raw;
  // A chunked one is refused as it grows past the budget.
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n" +
                            body + "\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 503) << raw;
  // Bodiless requests are not affected.
  HttpConnection other(port());
  EXPECT_EQ(other.Send("GET", "/").status, 200);
  EXPECT_EQ(server_->stats().refused_max_body_memory.load(), 2u);

  held->second(TestHandler::Echo(held->first));
  EXPECT_EQ(answered.get().status, 200);
  EXPECT_EQ(server_->stats().body_memory_bytes.load(), 0u);

  // A connection that dies with its body half-sent gives its share back too.
  {
    RawConnection dying(port());
    dying.Write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\nabc");
    EXPECT_TRUE(test::WaitFor([&] { return server_->stats().body_memory_bytes.load() == 600; }));
    EXPECT_EQ(server_->stats().body_memory_bytes.load(), 600u);
  }
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().body_memory_bytes.load() == 0; }));
  EXPECT_EQ(server_->stats().body_memory_bytes.load(), 0u);
}

// Issue 32.4a: a body's memory is taken as its bytes arrive, so connections that announce large
// bodies and trickle them hold almost nothing; and one client (address) may hold at most
// max_body_memory_per_client, so it cannot take the whole budget from the others.
TEST_F(ServerTest, BodyMemoryIsTakenAsBytesArriveAndEachClientHasItsShare) {
  ServerOptions o = Options();
  o.max_body_memory = 100 * 1024;
  o.max_body_memory_per_client = 40 * 1024;
  StartServer(o);
  // Ten connections announce 30 KiB each (300 KiB, three times the budget) and send one byte.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(slow.back()->Write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 30720\r\n\r\nb"));
  }
  // Two hold the 16 KiB first step, not the 30 KiB they announced; past 127.0.0.1's share of
  // 40 KiB the others hold just the byte that came.
  ASSERT_TRUE(test::WaitFor(
      [&] { return server_->stats().body_memory_bytes.load() == 2u * 16 * 1024 + 8; }));
  // Another client's body fits beside them.
  {
    RawConnection other(port(), "127.0.0.2");
    ASSERT_TRUE(other.Write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 30720\r\n\r\n" +
                            std::string(30720, 'o')));
    EXPECT_EQ(StatusOf(other.ReadUntil("\r\n\r\n", seconds(5))), 200);
  }
  // 127.0.0.1 cannot grow past its share even though the server has room: 503, retry later.
  ASSERT_TRUE(slow.back()->Write(std::string(20 * 1024, 'b')));
  std::string raw = slow.back()->ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(raw), 503) << raw;
  EXPECT_TRUE(Contains(raw, "Retry-After: 1\r\n")) << raw;
  EXPECT_TRUE(Contains(raw, "from 127.0.0.1 (max_body_memory_per_client 40KiB)")) << raw;
  EXPECT_EQ(server_->stats().refused_max_body_memory_per_client.load(), 1u);
  EXPECT_EQ(server_->stats().refused_max_body_memory.load(), 0u);
  // A body larger than a client's share can never fit: 413 naming the setting.
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n", seconds(5));
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "max_body_memory_per_client (40KiB)")) << raw;
  // The slow connections give their memory back when they close.
  slow.clear();
  EXPECT_TRUE(test::WaitFor([&] { return server_->stats().body_memory_bytes.load() == 0; }));
}

TEST_F(ServerTest, FoldedLinesDuplicateHostAndLongRequestLinesAreRefused) {
  ServerOptions o = Options();
  o.header_limit = 1024;
  StartServer(o);
  for (std::string bad : {"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost: x\r\nX-A:\r\n b\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
                          "GET / HTTP/1.1\r\nHost: x\r\nHOST: x\r\n\r\n"}) {
    std::string raw = SendRaw(port(), bad);
    EXPECT_EQ(StatusOf(raw), 400) << bad << " → " << raw;
  }
  std::string raw =
      SendRaw(port(), "GET /" + std::string(2000, 't') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 414) << raw;
  EXPECT_TRUE(Contains(raw, "request line too long")) << raw;
  // A target that never ends, too.
  RawConnection c(port());
  c.Write("GET /" + std::string(4000, 't'));
  EXPECT_EQ(StatusOf(c.ReadUntilClose(seconds(5))), 414);
  EXPECT_EQ(handler_.requests.load(), 0);
}

// A body that cannot fit max_body_memory even with nothing else in memory gets 413 (retrying
// cannot help); only one that would fit an empty budget gets 503 with Retry-After.
TEST_F(ServerTest, BodyLargerThanTheWholeMemoryBudgetGets413) {
  ServerOptions o = Options();
  o.max_body_memory = 1000;  // below default_body_limit (5 MiB)
  StartServer(o);
  std::string raw =
      SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", seconds(5));
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "max_body_memory (1000B)")) << raw;
  EXPECT_FALSE(Contains(raw, "Retry-After")) << raw;
  // Chunked: one large chunk, or small chunks that add up past the budget.
  raw = SendRaw(port(),
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n186a0\r\n" +
                    std::string(2000, 'b'),
                seconds(5));
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "max_body_memory")) << raw;
  EXPECT_FALSE(Contains(raw, "Retry-After")) << raw;
  std::string chunks;
  for (int i = 0; i < 30; ++i) chunks += "64\r\n" + std::string(100, 'c') + "\r\n";
  raw = SendRaw(
      port(),
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + "0\r\n\r\n",
      seconds(5));
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_TRUE(Contains(raw, "max_body_memory")) << raw;
  EXPECT_FALSE(Contains(raw, "Retry-After")) << raw;
  EXPECT_EQ(server_->stats().refused_max_body_memory.load(), 0u) << "413s are not 503 refusals";
  // Exactly the budget fits.
  HttpConnection c(port());
  EXPECT_EQ(c.Send("POST", "/", {}, std::string(1000, 'a')).status, 200);
  raw = SendRaw(port(),
                "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                "Transfer-Encoding: chunked\r\n\r\n3e8\r\n" +
                    std::string(1000, 'a') + "\r\n0\r\n\r\n",
                seconds(5));
  EXPECT_EQ(StatusOf(raw), 200) << raw;
  // The handler's own smaller limit still names itself.
  handler_.on_head = [](const RequestHead&) {
    Handler::HeadDecision d;
    d.body_limit = 500;
    return d;
  };
  raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n", seconds(5));
  EXPECT_EQ(StatusOf(raw), 413) << raw;
  EXPECT_FALSE(Contains(raw, "max_body_memory")) << raw;
}

// RFC 9112 §3.2: an HTTP/1.1 request has exactly one Host field with a single value; HTTP/1.0
// may omit it. A second Authorization field is refused too (which one counts is ambiguous).
TEST_F(ServerTest, HostIsRequiredAndSingleAndAuthorizationIsSingle) {
  StartServer();
  for (std::string bad :
       {"GET / HTTP/1.1\r\n\r\n", "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
        "GET / HTTP/1.1\r\nHost: x, y\r\n\r\n", "GET / HTTP/1.1\r\nHost: x,y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x y\r\n\r\n", "GET / HTTP/1.0\r\nHost: x, y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nauthorization: a\r\nAUTHORIZATION: a\r\n\r\n",
        "GET / HTTP/1.0\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n"}) {
    std::string raw = SendRaw(port(), bad, seconds(5));
    EXPECT_EQ(StatusOf(raw), 400) << bad << " → " << raw;
    EXPECT_EQ(CountResponses(raw), 1) << raw;
  }
  EXPECT_TRUE(Contains(SendRaw(port(), "GET / HTTP/1.1\r\n\r\n"), "missing Host header field"));
  EXPECT_TRUE(Contains(SendRaw(port(), "GET / HTTP/1.1\r\nHost: x, y\r\n\r\n"),
                       "Host header field holds more than one value"));
  EXPECT_TRUE(Contains(SendRaw(port(),
                               "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\n"
                               "Authorization: a\r\n\r\n"),
                       "more than one Authorization header field"));
  EXPECT_EQ(handler_.requests.load(), 0);
  for (std::string good :
       {"GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\nConnection: close\r\n\r\n"}) {
    std::string raw = SendRaw(port(), good, seconds(5));
    EXPECT_EQ(StatusOf(raw), 200) << good << " → " << raw;
  }
}

// A chunk-size line is bounded like chunk extensions (by what is left of the header limit),
// leading zeros included, and named for what it is.
TEST_F(ServerTest, LongChunkSizeLinesAreRefusedByName) {
  ServerOptions o = Options();
  o.header_limit = 1024;
  StartServer(o);
  // Never ends.
  RawConnection endless(port());
  endless.Write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  for (int i = 0; i < 100 && endless.Write(std::string(1000, '0')); ++i) {
  }
  std::string raw = endless.ReadUntilClose(seconds(5));
  EXPECT_EQ(StatusOf(raw), 400) << raw;
  EXPECT_TRUE(Contains(raw, "chunk size line too long")) << raw;
  EXPECT_FALSE(Contains(raw, "extensions")) << raw;
  // Arrives whole: a chunk, and the last chunk.
  for (std::string line : {std::string(5000, '0') + "3\r\nabc\r\n0\r\n\r\n",
                           "3\r\nabc\r\n" + std::string(5000, '0') + "\r\n\r\n",
                           "3\r\nabc\r\n" + std::string(5000, '0') + "1\r\nd\r\n0\r\n\r\n"}) {
    raw = SendRaw(port(), "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + line,
                  seconds(5));
    EXPECT_EQ(StatusOf(raw), 400) << raw;
    EXPECT_TRUE(Contains(raw, "chunk size line too long")) << raw;
  }
  EXPECT_EQ(handler_.requests.load(), 0);
  // A few leading zeros are fine, in many chunks too.
  std::string chunks;
  for (int i = 0; i < 200; ++i) chunks += "00000001\r\na\r\n";
  raw = SendRaw(port(),
                "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                "Transfer-Encoding: chunked\r\n\r\n" +
                    chunks + "0000000000\r\n\r\n",
                seconds(5));
  EXPECT_EQ(StatusOf(raw), 200) << raw;
  EXPECT_TRUE(Contains(raw, std::string(200, 'a'))) << raw;
}

}  // namespace
}  // namespace hookrelay::http
