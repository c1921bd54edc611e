// Hostile input against the real `hookrelay serve` binary (issue 14): malformed request lines,
// Content-Length and chunked framing abuse, header floods, 10,000 idle connections, and path
// traversal under /ui/. Raw sockets throughout; what is stored is read back from the real store.
// (tests/integration/http_hardening_test.cc covers Transfer-Encoding lists, trailers, chunk
// extension and size-line limits, Host and Authorization, and the body memory budget.)
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "integration/integration_util.h"
#include "store/store.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/integration_test.h"
#include "support/process.h"

namespace hookrelay {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CountResponses;
using testing::HookrelayServer;
using testing::HttpConnection;
using testing::HttpResponse;
using testing::RawConnection;
using testing::StatusOf;
using testing::TempDir;

// The header and body timeouts are far longer than any wait here (60 s at most, a bound on a
// hang): an answer that comes at all was given at once, not when a timeout ran out (408).
constexpr const char* kConfig = R"(
[server]
header_timeout = "10m"
body_timeout = "10m"
max_header = "8KiB"

[[sources]]
name = "s"
)";

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

class HttpFramingTest : public testing::IntegrationTest {
 protected:
  HttpFramingTest() { admin_token_ = "test-admin-token-0123456789"; }
  void Start(const char* config = kConfig) { StartServer(config); }
  uint16_t port() const { return server_->port(); }

  // Stops the server and returns the bodies of every stored event.
  std::vector<std::string> StopAndReadBodies() {
    EXPECT_EQ(server_->Stop(), 0) << server_->output();
    std::vector<std::string> bodies;
    auto store = testing::OpenStoreAt(data_dir());
    if (!store) return bodies;
    auto page = store->ListEvents({}, "", 1000);
    EXPECT_TRUE(page.ok());
    if (!page.ok()) return bodies;
    for (const auto& summary : page->items) {
      auto event = store->GetEvent(summary.id);
      if (event.ok() && *event) bodies.push_back((*event)->body);
    }
    return bodies;
  }

  // Sends `bytes` on a connection that stays open for writing (so the server cannot take EOF
  // as its cue) and returns what comes back until the server closes (within 60 s: kConfig's
  // timeouts are 10 min, so a refusal that comes was not a timeout's).
  std::string SendAndWait(const std::string& bytes) {
    RawConnection c(port());
    EXPECT_TRUE(c.Write(bytes));
    return c.ReadUntilClose(seconds(60));
  }

  // The request must be refused with `status`, alone (nothing after it is parsed as a second
  // request), closing the connection, promptly, and never with a 5xx.
  void ExpectRefused(const std::string& bytes, int status, std::string_view message = {}) {
    std::string got = SendAndWait(bytes);
    EXPECT_EQ(StatusOf(got), status) << ::testing::PrintToString(bytes) << " → " << got;
    EXPECT_EQ(CountResponses(got), 1) << ::testing::PrintToString(bytes) << " → " << got;
    EXPECT_TRUE(Contains(got, "Connection: close\r\n")) << got;
    EXPECT_TRUE(Contains(got, "\"error\"")) << got;
    if (!message.empty()) {
      EXPECT_TRUE(Contains(got, message)) << got;
    }
  }
};

// A request the store would accept, sent after each malformed one on the same connection: if
// the server resynchronised on it, the malformed request smuggled it in.
const std::string kSmuggled =
    "POST /in/s HTTP/1.1\r\nHost: x\r\nContent-Length: 14\r\n\r\n{\"smuggled\":1}";

TEST_F(HttpFramingTest, MalformedRequestLinesAre400) {
  Start();
  const std::string tail = "Host: x\r\nContent-Length: 2\r\n\r\n{}";
  for (const std::string& line : std::vector<std::string>{
           "POST /in/s\r\n",                 // HTTP/0.9 style: no version
           "POST /in/s HTTP/1.1 extra\r\n",  // trailing garbage
           "POST  /in/s HTTP/1.1\r\n",       // two spaces
           "POST /in/s  HTTP/1.1\r\n",
           "POST\t/in/s HTTP/1.1\r\n",                     // tab as separator
           "POST /in/s HTTP/1.1 \r\n",                     // trailing space
           " POST /in/s HTTP/1.1\r\n",                     // leading space
           "POST /in/s http/1.1\r\n",                      // the version is case-sensitive
           "POST /in/s HTTP/1\r\n",                        // incomplete version
           "POST /in/s HTTP/1.x\r\n",                      //
           "POST /in/s HTTP/11.1\r\n",                     //
           "POST /in/s HTTX/1.1\r\n",                      //
           "PO(ST /in/s HTTP/1.1\r\n",                     // not a token
           "POST /in/s\x7f HTTP/1.1\r\n",                  // DEL in the target
           std::string("POST /in/s\0x HTTP/1.1\r\n", 24),  // NUL in the target
           "POST /in/s x HTTP/1.1\r\n",                    // space in the target
           "POST in/s HTTP/1.1\r\n",                       // not origin-form
           "POST ?a=b HTTP/1.1\r\n",                       //
           "POST /in/%zz HTTP/1.1\r\n",                    // bad percent-encoding
           "POST /in/s%2 HTTP/1.1\r\n",                    //
           "POST * HTTP/1.1\r\n",                          // "*" is for OPTIONS only
           "GET * HTTP/1.1\r\n",                           //
           "MPTIONS * HTTP/1.1\r\n",                       // what http_request_fuzzer found first
           "POST /in/s HTTP/1.1\n",                        // bare LF ends the request line
       }) {
    ExpectRefused(line + tail + kSmuggled, 400);
  }
  // The asterisk-form is OPTIONS's (RFC 9112 §3.2.4): it is parsed, and answered with no 5xx.
  std::string raw =
      testing::SendRaw(port(), "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_GE(StatusOf(raw), 200) << raw;
  EXPECT_LT(StatusOf(raw), 500) << raw;
  EXPECT_NE(StatusOf(raw), 400) << raw;
  // A bare LF ending a header line is refused too (RFC 9112 §2.2 allows a server to; a proxy in
  // front may not agree on where the line ends).
  ExpectRefused("POST /in/s HTTP/1.1\r\nHost: x\nContent-Length: 2\r\n\r\n{}" + kSmuggled, 400);
  ExpectRefused("POST /in/s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\n\r\n{}" + kSmuggled, 400);
  EXPECT_TRUE(StopAndReadBodies().empty());
}

TEST_F(HttpFramingTest, ConflictingOrInvalidContentLengthIs400) {
  Start();
  for (std::string cl : {
           "Content-Length: 2\r\nContent-Length: 2",  // a duplicate, even with the same value
           "Content-Length: 2\r\nContent-Length: 3",  // conflicting
           "Content-Length: 2, 2",                    // a list
           "Content-Length: 2,3",
           "Content-Length: -2",
           "Content-Length: +2",
           "Content-Length: 0x2",
           "Content-Length: 2a",
           "Content-Length: 2 2",
           "Content-Length: 2.0",
           "Content-Length:",
           "Content-Length: 99999999999999999999999999",       // overflows 64 bits
           "Content-Length: 18446744073709551616",             // 2^64
           "Content-Length: 2\r\nTransfer-Encoding: chunked",  // both framings (smuggling)
           "Transfer-Encoding: chunked\r\nContent-Length: 2",
       }) {
    ExpectRefused("POST /in/s HTTP/1.1\r\nHost: x\r\n" + cl + "\r\n\r\n{}" + kSmuggled, 400);
  }
  // Whitespace around the value is not part of it (RFC 9110 §5.5).
  std::string raw = testing::SendRaw(
      port(),
      "POST /in/s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \t2 \r\n\r\n{}");
  EXPECT_EQ(StatusOf(raw), 202) << raw;
  // A huge but well-formed Content-Length is 413 before a byte of the body is read.
  ExpectRefused("POST /in/s HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551615\r\n\r\n",
                413);
  auto bodies = StopAndReadBodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0], "{}");
}

TEST_F(HttpFramingTest, ChunkedFramingAbuseIs400AtOnce) {
  Start();
  const std::string head = "POST /in/s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  // Each is sent on a connection left open: the server must not wait for more bytes.
  for (const std::string& body : std::vector<std::string>{
           std::string("zz\r\n{}\r\n0\r\n\r\n"),  // not hex
           "-2\r\n{}\r\n0\r\n\r\n",               // negative
           "0x2\r\n{}\r\n0\r\n\r\n",              // a C prefix
           "+2\r\n{}\r\n0\r\n\r\n",               //
           " 2\r\n{}\r\n0\r\n\r\n",               // leading whitespace
           "\r\n{}\r\n0\r\n\r\n",                 // empty size
           "2\n{}\r\n0\r\n\r\n",                  // bare LF after the size
           "2\n{}",                               // ... with nothing after it yet
           "2\n",                                 //
           "2;a=b\n{}\r\n0\r\n\r\n",              // bare LF after an extension
           "2\r\n{}\n0\r\n\r\n",                  // bare LF after the data
           "2\r\n{}\n",                           //
           "2\r\n{}0\r\n\r\n",                    // missing CRLF after the data
           "2\r\n{}xx0\r\n\r\n",                  //
           "2\r\n{}\r\r\n0\r\n\r\n",              // CR without LF
           "2\r\n{}\r\n0\n\r\n",                  // bare LF after the last chunk
           "2\r\n{}\r\n0\n",                      //
           "2\r\n{}\r\n0\r\n\n",                  // bare LF ending the trailer section
           "2\r\n{}\r\n0\r\nX-T: 1\n\r\n",        // bare LF in a trailer field
           "2\r\n{}\r\n0\r\nX-T: 1\n",            //
           "1\r\n{}\r\n0\r\n\r\n",                // data longer than its size
           "10000000000000000\r\n",               // 2^64: overflows
           "fffffffffffffffff\r\n",               //
           "2;\r\n{}\r\n0\r\n\r\n",               // an extension without a name
           "2;=b\r\n{}\r\n0\r\n\r\n",             //
           "2;a=\"b\r\n{}\r\n0\r\n\r\n",          // an unterminated quoted value
           "2;a b\r\n{}\r\n0\r\n\r\n",            //
       }) {
    ExpectRefused(head + body, 400);
  }
  // A huge but well-formed chunk size is 413 at its size line, before any of its data.
  ExpectRefused(head + "ffffffffffffffff\r\n", 413);
  ExpectRefused(head + "2\r\n{}\r\n7fffffffffffffff\r\n", 413);
  // Well-formed extensions (with a name, a token or quoted value) are accepted and ignored.
  std::string raw = testing::SendRaw(
      port(),
      "POST /in/s HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2;a=b;c;d=\"q;r\"\r\n{}\r\n0;last\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 202) << raw;
  auto bodies = StopAndReadBodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0], "{}");
}

TEST_F(HttpFramingTest, MalformedAndFloodingHeaderFieldsAreRefused) {
  Start();
  const std::string line = "POST /in/s HTTP/1.1\r\nHost: x\r\n";
  const std::string tail = "Content-Length: 2\r\n\r\n{}";
  for (const std::string& field : std::vector<std::string>{
           "X-A : b\r\n",   // whitespace before the colon (RFC 9112 §5.1: must be 400)
           "X-A\t: b\r\n",  //
           "X A: b\r\n",    // not a token
           ": b\r\n",       // no name
           "X-A b\r\n",     // no colon
           "X-(A): b\r\n",  //
           std::string("X-A: a\0b\r\n", 10),  // NUL in a value
           "X-A: a\rb\r\n",                   // CR alone in a value
       }) {
    ExpectRefused(line + field + tail + kSmuggled, 400);
  }
  // Many small fields: 431 as soon as the head passes max_header (8 KiB), whether it arrives at
  // once or keeps coming without an end.
  std::string many;
  for (int i = 0; i < 4000; ++i) many += "a:\r\n";
  ExpectRefused(line + many + tail, 431);
  {
    RawConnection c(port());
    ASSERT_TRUE(c.Write(line));
    for (int i = 0; i < 10000 && c.Write("X-Flood: 1\r\n"); ++i) {
    }
    // An answer at all is not the header timeout's (10 min).
    std::string got = c.ReadUntilClose(seconds(60));
    EXPECT_EQ(StatusOf(got), 431) << got;
  }
  // Many fields within the limit are fine.
  std::string some;
  for (int i = 0; i < 500; ++i) some += "X-" + std::to_string(i) + ": v\r\n";
  std::string raw = testing::SendRaw(port(), line + some + "Connection: close\r\n" + tail);
  EXPECT_EQ(StatusOf(raw), 202) << raw.substr(0, 300);
  EXPECT_EQ(StopAndReadBodies().size(), 1u);
}

// Raises this process's soft open-file limit to its hard limit; the server started afterwards
// inherits it. Returns the soft limit now.
rlim_t RaiseFdLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

// 10,000 idle connections (connected, not a byte sent) do not keep other clients from being
// served; and once every connection is busy with a request, a newcomer past max_connections gets
// a prompt 503 with Retry-After, not a hang.
TEST_F(HttpFramingTest, TenThousandIdleConnectionsAndPastMaxConnections) {
  constexpr int kIdle = 10000;
  constexpr int kMax = kIdle + 100;
  // This process holds kIdle connections; the server as many again plus its own descriptors.
  const rlim_t fds = RaiseFdLimit();
  ASSERT_GE(fds, static_cast<rlim_t>(kMax + 1000))
      << "this test needs an open-file limit (ulimit -Hn) of at least " << kMax + 1000;
  const std::string config = R"(
[server]
header_timeout = "60s"
idle_timeout = "120s"
max_connections = )" + std::to_string(kMax) +
                             R"(
max_connections_per_client = 0

[[sources]]
name = "s"
)";
  Start(config.c_str());
  std::vector<std::unique_ptr<RawConnection>> idle;
  idle.reserve(kIdle);
  for (int i = 0; i < kIdle; ++i) idle.push_back(std::make_unique<RawConnection>(port()));

  // Others are served while all of those stay open (20 s is a bound on a hang, not a speed).
  for (int i = 0; i < 20; ++i) {
    HttpConnection c(port(), "127.0.0.1", seconds(20));
    EXPECT_EQ(c.Send("POST", "/in/s", {}, "{\"n\":" + std::to_string(i) + "}").status, 202);
    EXPECT_EQ(c.Send("GET", "/healthz").status, 200);
  }
  {
    HttpConnection c(port());
    std::string metrics = c.Send("GET", "/metrics").body;
    // The idle ones and this one (and some of the 20 above whose close is still under way).
    const std::string gauge = "\nhookrelay_http_connections ";
    const auto at = metrics.find(gauge);
    ASSERT_NE(at, std::string::npos) << metrics;
    const int open = std::stoi(metrics.substr(at + gauge.size()));
    EXPECT_GE(open, kIdle + 1) << metrics;
    EXPECT_LE(open, kIdle + 21) << metrics;
  }
  int closed = 0;
  for (auto& c : idle) {
    c->ReadUntilClose(milliseconds(0));
    if (c->closed()) ++closed;
  }
  EXPECT_EQ(closed, 0) << "below max_connections no idle connection is closed";

  // Make every connection busy (a request begun, not finished), and fill up to the limit.
  for (auto& c : idle) ASSERT_TRUE(c->Write("POST /in/s HTTP/1.1\r\n"));
  for (int i = kIdle; i < kMax; ++i) {
    idle.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(idle.back()->Write("POST /in/s HTTP/1.1\r\n"));
  }
  // Newcomers past the limit are refused promptly with 503 once the server has accepted every
  // busy connection and read its first bytes (nothing is idle then). Until then a newcomer is let
  // in (perhaps in place of a connection not read from yet): it begins a request too, so it is
  // busy and stays, and the next ones are refused. Probes never finish a request: a served one
  // would linger as a closing connection that the next probe could take the place of.
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  int refused_in_a_row = 0;
  while (refused_in_a_row < 5 && std::chrono::steady_clock::now() < deadline) {
    auto newcomer = std::make_unique<RawConnection>(port());
    newcomer->Write("POST /in/s HTTP/1.1\r\n");
    std::string got = newcomer->ReadUntilClose(seconds(3));
    if (StatusOf(got) != 503) {
      EXPECT_EQ(got, "") << "let in: it waits for the rest of its request";
      idle.push_back(std::move(newcomer));
      refused_in_a_row = 0;
      continue;
    }
    ++refused_in_a_row;
    EXPECT_TRUE(Contains(got, "Retry-After: ")) << got;
    EXPECT_TRUE(Contains(got, "max_connections " + std::to_string(kMax))) << got;
    EXPECT_TRUE(newcomer->closed());
  }
  ASSERT_EQ(refused_in_a_row, 5) << "newcomers past max_connections are refused with 503";
  // Busy connections were not closed for newcomers (a probe may have taken the place of one the
  // server had not read from yet, no more than one per probe), and each can finish its request.
  int busy_closed = 0;
  RawConnection* open = nullptr;
  for (auto& c : idle) {
    c->ReadUntilClose(milliseconds(0));
    if (c->closed()) {
      ++busy_closed;
    } else if (open == nullptr) {
      open = c.get();
    }
  }
  EXPECT_LT(busy_closed, 100);
  ASSERT_NE(open, nullptr);
  ASSERT_TRUE(open->Write("Host: x\r\nContent-Length: 2\r\n\r\n{}"));
  EXPECT_EQ(StatusOf(open->ReadUntil("\r\n\r\n", seconds(5))), 202);
  idle.clear();
  // Once they are gone, newcomers are served again.
  bool served = false;
  const auto again = std::chrono::steady_clock::now() + seconds(10);
  while (!served && std::chrono::steady_clock::now() < again) {
    RawConnection c(port());
    c.Write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    served = StatusOf(c.ReadUntilClose(seconds(5))) == 200;
  }
  EXPECT_TRUE(served);
  EXPECT_EQ(StopAndReadBodies().size(), 21u);
}

// A page load revalidates the dashboard's files instead of downloading them again: each carries an
// ETag (and no-cache, so an upgrade is seen at once); If-None-Match with it is a 304 without a
// body, on the same keep-alive connection; a stale or foreign tag gets the file.
TEST_F(HttpFramingTest, UiFilesRevalidateWithEtags) {
  Start();
  HttpConnection c(port());
  std::vector<std::string> tags;
  for (const char* path : {"/ui/", "/ui/js/app.js", "/ui/css/app.css", "/ui/js/pages/events.js"}) {
    HttpResponse first = c.Send("GET", path);
    ASSERT_EQ(first.status, 200) << path;
    const std::string etag = first.Header("ETag");
    ASSERT_EQ(etag.size(), 34u) << path << " ETag " << etag;  // a quoted 32-digit hash
    EXPECT_EQ(etag.front(), '"');
    EXPECT_EQ(first.Header("Cache-Control"), "no-cache") << path;
    tags.push_back(etag);

    HttpResponse again = c.Send("GET", path, {{"If-None-Match", etag}});
    EXPECT_EQ(again.status, 304) << path;
    EXPECT_EQ(again.body, "") << path;
    EXPECT_EQ(again.Header("ETag"), etag) << path;
    EXPECT_TRUE(again.HasHeader("Content-Security-Policy")) << path;
    // As browsers send it after a weak match, and in a list.
    EXPECT_EQ(c.Send("GET", path, {{"If-None-Match", "W/" + etag}}).status, 304) << path;
    EXPECT_EQ(c.Send("GET", path, {{"If-None-Match", "\"0\", " + etag}}).status, 304) << path;
    EXPECT_EQ(c.Send("HEAD", path, {{"If-None-Match", etag}}).status, 304) << path;

    HttpResponse stale = c.Send("GET", path, {{"If-None-Match", "\"0123456789abcdef\""}});
    EXPECT_EQ(stale.status, 200) << path;
    EXPECT_EQ(stale.body, first.body) << path;
  }
  // Different files, different tags (a content hash, not a build stamp).
  std::sort(tags.begin(), tags.end());
  EXPECT_EQ(std::unique(tags.begin(), tags.end()), tags.end());
  // A 404 has no ETag to revalidate.
  HttpResponse missing = c.Send("GET", "/ui/no-such-file.js", {{"If-None-Match", "*"}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_FALSE(missing.HasHeader("ETag"));
}

// /ui/ serves only the embedded dashboard files: no spelling of "..", an encoded slash or a
// backslash reaches anything else, and none of them is a 5xx.
TEST_F(HttpFramingTest, PathTraversalUnderUiFindsNothing) {
  Start();
  HttpConnection c(port());
  HttpResponse index = c.Send("GET", "/ui/");
  ASSERT_EQ(index.status, 200);
  ASSERT_EQ(c.Send("GET", "/ui/js/app.js").status, 200);
  for (const std::string& target : std::vector<std::string>{
           "/ui/../etc/passwd",
           "/ui/../../../../etc/passwd",
           "/ui/%2e%2e/etc/passwd",
           "/ui/%2E%2E/%2E%2E/etc/passwd",
           "/ui/.%2e/.%2e/etc/passwd",
           "/ui/..%2f..%2f..%2fetc%2fpasswd",
           "/ui/..%2F..%2Fetc%2Fpasswd",
           "/ui/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
           "/ui/..\\..\\etc\\passwd",
           "/ui/..%5c..%5cetc%5cpasswd",
           "/ui/%5c..%5c..%5cetc%5cpasswd",
           "/ui/js/../index.html",
           "/ui/js/%2e%2e/index.html",
           "/ui/./index.html",
           "/ui/%2e/index.html",
           "/ui/js%2fapp.js",  // an encoded slash is not a separator
           "/ui/js%2Fapp.js",
           "/ui/js\\app.js",
           "/ui/js%5capp.js",
           "/ui//js/app.js",
           "/ui/index.html%00",
           "/ui/index.html%00.js",
           "/ui/%00",
           "/ui/....//....//etc/passwd",
           "/ui/%252e%252e/etc/passwd",    // double encoding
           "/ui/%c0%ae%c0%ae/etc/passwd",  // overlong UTF-8 dots
           "/ui/" + std::string(4000, 'a'),
           "/ui/../api/v1/sources",
           "/ui/%2e%2e/api/v1/sources",
           "/ui/../../hookrelay.toml",
       }) {
    HttpConnection t(port());
    HttpResponse r = t.Send("GET", target);
    EXPECT_TRUE(r.status == 404 || r.status == 400) << target << " → " << r.status << " " << r.body;
    EXPECT_FALSE(Contains(r.body, "root:")) << target;
    EXPECT_NE(r.body, index.body) << target;
    EXPECT_FALSE(Contains(r.body, "\"items\"")) << target;
  }
  // Raw bytes the client library would not send.
  for (std::string target : {"/ui/..", "/ui/../", "/ui/..;/index.html", "/ui/\\..\\"}) {
    std::string raw = testing::SendRaw(
        port(), "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(StatusOf(raw) == 404 || StatusOf(raw) == 400) << target << " → " << raw;
  }
}

}  // namespace
}  // namespace hookrelay
