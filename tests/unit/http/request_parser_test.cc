// The request parser and framing checks, fed bytes directly (no sockets): what each request
// becomes, and which refusal each malformed one gets.

#include "http/request_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <string_view>

#include "http/framing.h"

namespace hookrelay::http {
namespace {

using Event = RequestReader::Event;

constexpr uint64_t kHeaderLimit = 1024;

struct Outcome {
  Event event = Event::kNeedMore;
  ParseError error;
  BodyBudget::Refusal refusal = BodyBudget::Refusal::kNone;
  Request request;
  std::string rest;  // bytes left in the buffer (pipelined)
};

// Reads one request from `input`, handing the reader at most `piece` bytes at a time, as a
// connection's reads would. A request with a body gets `body_limit`.
class Reader {
 public:
  explicit Reader(uint64_t max_total = 1 << 20, uint64_t max_per_client = 0)
      : budget_(total_, max_total, max_per_client), reservation_(budget_, ClientKey{}) {}

  Outcome Read(std::string_view input, size_t piece = std::string_view::npos,
               uint64_t body_limit = 1 << 16) {
    Outcome out;
    reservation_.Release();
    reader_.Begin(out.request, reservation_);
    size_t fed = 0;
    while (true) {
      RequestReader::Step step = reader_.Advance(buffer_);
      switch (step.event) {
        case Event::kNeedMore: {
          if (fed == input.size()) return Finish(std::move(out), Event::kNeedMore);
          const size_t n = std::min({input.size() - fed, step.read_size, piece});
          auto dest = buffer_.prepare(n);
          std::memcpy(dest.data(), input.data() + fed, n);
          buffer_.commit(n);
          fed += n;
          continue;
        }
        case Event::kHead:
          if (auto error = reader_.CompleteHead()) {
            out.error = *error;
            return Finish(std::move(out), Event::kError);
          }
          if (reader_.has_body()) reader_.StartBody(body_limit);
          continue;
        default:
          out.error = step.error;
          out.refusal = step.refusal;
          // What was not handed to the reader yet stays "in the buffer" too.
          out.rest.assign(input.substr(fed));
          return Finish(std::move(out), step.event);
      }
    }
  }

  BodyBudget& budget() { return budget_; }
  BodyReservation& reservation() { return reservation_; }
  uint64_t total() const { return total_.load(); }
  bool keep_alive() const { return reader_.keep_alive(); }
  bool expect_continue() const { return reader_.expect_continue(); }

 private:
  Outcome Finish(Outcome out, Event event) {
    out.event = event;
    out.rest.insert(0, static_cast<const char*>(buffer_.data().data()), buffer_.size());
    buffer_.consume(buffer_.size());
    return out;
  }

  std::atomic<uint64_t> total_{0};
  BodyBudget budget_;
  BodyReservation reservation_;
  boost::beast::flat_buffer buffer_;
  RequestReader reader_{kHeaderLimit};
};

TEST(RequestParserTest, ReadsAGetWithItsFieldsInOrder) {
  Reader reader;
  Outcome out = reader.Read("GET /a/b%20c?x=1 HTTP/1.1\r\nHost: h\r\nX-B: 2\r\nx-a: 1\r\n\r\n");
  ASSERT_EQ(out.event, Event::kComplete) << out.error.message;
  EXPECT_EQ(out.request.method, "GET");
  EXPECT_EQ(out.request.target, "/a/b%20c?x=1");
  EXPECT_EQ(out.request.path, "/a/b%20c");
  EXPECT_EQ(out.request.query, "x=1");
  ASSERT_EQ(out.request.segments.size(), 2u);
  EXPECT_EQ(out.request.segments[1], "b c");
  EXPECT_EQ(out.request.version, 11);
  ASSERT_EQ(out.request.headers.size(), 3u);
  EXPECT_EQ(out.request.headers[1].first, "X-B");
  EXPECT_EQ(out.request.headers[2].first, "x-a");
  EXPECT_TRUE(out.request.body.empty());
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_TRUE(out.rest.empty());
}

TEST(RequestParserTest, OneByteAtATimeReadsTheSameBody) {
  const std::string input =
      "POST /in HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n"
      "hello world";
  Reader reader;
  Outcome out = reader.Read(input, 1);
  ASSERT_EQ(out.event, Event::kComplete) << out.error.message;
  EXPECT_EQ(out.request.body, "hello world");
  EXPECT_EQ(out.request.content_length, 11u);
  EXPECT_FALSE(out.request.chunked);
  EXPECT_TRUE(reader.expect_continue());
  // The body's memory is reserved from the budget until the reservation is released.
  EXPECT_GE(reader.total(), 11u);
  reader.reservation().Release();
  EXPECT_EQ(reader.total(), 0u);
}

TEST(RequestParserTest, ChunkedBodyDropsItsTrailerFields) {
  Reader reader;
  for (size_t piece : {size_t{1}, size_t{7}, std::string_view::npos}) {
    Outcome out = reader.Read(
        "POST /in HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;ext=\"a b\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Signature: forged\r\nHost: evil\r\n\r\n",
        piece);
    ASSERT_EQ(out.event, Event::kComplete) << piece << ": " << out.error.message;
    EXPECT_EQ(out.request.body, "hello world");
    EXPECT_TRUE(out.request.chunked);
    ASSERT_EQ(out.request.headers.size(), 2u) << "a trailer field became a header";
    EXPECT_EQ(out.request.Header("host"), "h");
  }
}

TEST(RequestParserTest, PipelinedRequestsStayInTheBuffer) {
  Reader reader;
  const std::string second = "GET /two HTTP/1.1\r\nHost: h\r\n\r\n";
  Outcome first =
      reader.Read("POST /one HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc" + second);
  ASSERT_EQ(first.event, Event::kComplete);
  EXPECT_EQ(first.request.body, "abc");
  EXPECT_EQ(first.rest, second);
  Outcome next = reader.Read(first.rest);
  ASSERT_EQ(next.event, Event::kComplete);
  EXPECT_EQ(next.request.path, "/two");
}

TEST(RequestParserTest, AnIncompleteRequestNeedsMore) {
  Reader reader;
  EXPECT_EQ(reader.Read("").event, Event::kNeedMore);
  EXPECT_EQ(reader.Read("GET / HTTP/1.1\r\nHost: h\r\n").event, Event::kNeedMore);
  EXPECT_EQ(reader.Read("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabc").event,
            Event::kNeedMore);
}

TEST(RequestParserTest, AbsoluteFormAndAsteriskTargets) {
  Reader reader;
  Outcome abs = reader.Read("GET http://example.com/p/q?r=1 HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_EQ(abs.event, Event::kComplete) << abs.error.message;
  EXPECT_EQ(abs.request.path, "/p/q");
  EXPECT_EQ(abs.request.query, "r=1");
  Outcome bare = reader.Read("GET http://example.com?r=2 HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_EQ(bare.event, Event::kComplete) << bare.error.message;
  EXPECT_EQ(bare.request.path, "/");
  EXPECT_EQ(bare.request.query, "r=2");
  EXPECT_EQ(reader.Read("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").event, Event::kComplete);
  Outcome star = reader.Read("GET * HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(star.event, Event::kError);
  EXPECT_EQ(star.error.status, 400);
  EXPECT_NE(star.error.message.find("only allowed with OPTIONS"), std::string::npos);
}

struct Refused {
  const char* name;
  std::string input;
  int status;
  const char* message;  // a part of the message
  // Also when the request arrives byte by byte (else only at once).
  bool bytewise = true;
};

class RefusedRequestTest : public ::testing::TestWithParam<Refused> {};

TEST_P(RefusedRequestTest, GetsItsError) {
  const Refused& r = GetParam();
  for (size_t piece : {size_t{1}, std::string_view::npos}) {
    if (piece == 1 && !r.bytewise) continue;
    Reader reader;
    Outcome out = reader.Read(r.input, piece, 64);
    ASSERT_EQ(out.event, Event::kError) << r.name << " (piece " << piece << ")";
    EXPECT_EQ(out.error.status, r.status) << r.name << ": " << out.error.message;
    EXPECT_NE(out.error.message.find(r.message), std::string::npos)
        << r.name << ": " << out.error.message;
    EXPECT_FALSE(out.error.code.empty());
  }
}

const std::string kLongName(1100, 'a');

INSTANTIATE_TEST_SUITE_P(
    Framing, RefusedRequestTest,
    ::testing::Values(
        Refused{"obs_fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  2\r\n\r\n", 400,
                "obsolete line folding"},
        Refused{"bare_lf_head", "GET / HTTP/1.1\r\nHost: h\r\n\n", 400, "bare LF"},
        Refused{"missing_host", "GET / HTTP/1.1\r\n\r\n", 400, "missing Host"},
        Refused{"two_hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400,
                "more than one Host"},
        Refused{"host_list", "GET / HTTP/1.1\r\nHost: a, b\r\n\r\n", 400, "more than one value"},
        Refused{"two_authorizations",
                "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: a\r\nauthorization: b\r\n\r\n", 400,
                "more than one Authorization"},
        Refused{"same_content_length_twice",
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
                400, "more than one Content-Length"},
        Refused{"content_length_list",
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\nab", 400,
                "holds a list"},
        Refused{"te_gzip_chunked",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
                400, "unsupported Transfer-Encoding"},
        Refused{"te_chunked_twice",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
                "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                400, "Transfer-Encoding"},  // Beast refuses this one itself
        Refused{"te_http10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
                "HTTP/1.0"},
        Refused{"bad_percent", "GET /a%zz HTTP/1.1\r\nHost: h\r\n\r\n", 400, "percent-encoding"},
        Refused{"request_line_too_long", "GET /" + kLongName + " HTTP/1.1\r\nHost: h\r\n\r\n", 414,
                "request line too long"},
        Refused{"headers_too_large", "GET / HTTP/1.1\r\nHost: h\r\nX: " + kLongName + "\r\n\r\n",
                // Byte by byte it is 414 (request line too long): once a read ended inside the
                // request line, Beast parses nothing more until the head's end arrives, so the
                // request line is not read yet when the head passes the limit.
                431, "request headers too large", /*bytewise=*/false},
        Refused{"chunk_extensions_too_long",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;" + kLongName +
                    "\r\na\r\n0\r\n\r\n",
                400, "chunk extensions too long"},
        Refused{"chunk_size_zeros",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
                    std::string(1100, '0') + "1\r\na\r\n0\r\n\r\n",
                400, "chunk size line too long"},
        Refused{"trailers_too_large",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: " +
                    kLongName + "\r\n\r\n",
                431, "trailer fields too large"},
        Refused{"bare_lf_chunk_line",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\nY: b\n",
                400, "bare LF"},
        Refused{"unterminated_quote",
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                "1;a=\"b\r\nx\r\n0\r\n\r\n",
                400, "quoted value"},
        Refused{"malformed", "GET / HTTP/9\r\nHost: h\r\n\r\n", 400, "malformed HTTP request"}),
    [](const ::testing::TestParamInfo<Refused>& info) { return std::string(info.param.name); });

TEST(RequestParserTest, HttpTenNeedsNoHost) {
  Reader reader;
  Outcome out = reader.Read("GET / HTTP/1.0\r\n\r\n");
  ASSERT_EQ(out.event, Event::kComplete) << out.error.message;
  EXPECT_EQ(out.request.version, 10);
  EXPECT_FALSE(reader.keep_alive());
}

TEST(RequestParserTest, ChunkedBodyPastItsLimitIsTooLarge) {
  Reader reader;
  Outcome out =
      reader.Read("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" +
                      std::string(64, 'x') + "\r\n1\r\ny\r\n0\r\n\r\n",
                  std::string_view::npos, /*body_limit=*/64);
  EXPECT_EQ(out.event, Event::kBodyTooLarge);
  EXPECT_EQ(out.refusal, BodyBudget::Refusal::kNone);
}

TEST(RequestParserTest, BodyBeyondTheSharedBudgetIsRefused) {
  Reader reader(/*max_total=*/100);
  ClientKey other{};
  other[0] = 1;
  ASSERT_EQ(reader.budget().Take(other, 60), BodyBudget::Refusal::kNone);
  Outcome out = reader.Read("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 50\r\n\r\n" +
                            std::string(50, 'x'));
  EXPECT_EQ(out.event, Event::kOutOfBodyMemory);
  EXPECT_EQ(out.refusal, BodyBudget::Refusal::kServer);
  // Nothing was taken for the refused body.
  EXPECT_EQ(reader.total(), 60u);
  reader.budget().Give(other, 60);
  Outcome again = reader.Read("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 50\r\n\r\n" +
                              std::string(50, 'x'));
  EXPECT_EQ(again.event, Event::kComplete);
}

TEST(RequestParserTest, BodyBeyondTheClientsShareIsRefusedAsTheClients) {
  Reader reader(/*max_total=*/1000, /*max_per_client=*/100);
  ASSERT_EQ(reader.budget().Take(ClientKey{}, 60), BodyBudget::Refusal::kNone);
  Outcome out = reader.Read("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 50\r\n\r\n" +
                            std::string(50, 'x'));
  EXPECT_EQ(out.event, Event::kOutOfBodyMemory);
  EXPECT_EQ(out.refusal, BodyBudget::Refusal::kClient);
}

TEST(FramingTest, LineChecks) {
  EXPECT_FALSE(HasObsFold(std::string_view()));
  EXPECT_FALSE(HasBareLf(std::string_view()));
  EXPECT_FALSE(HasObsFold("GET / HTTP/1.1\r\nA: b\r\n\r\n"));
  EXPECT_TRUE(HasObsFold("GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n"));
  EXPECT_FALSE(HasBareLf("a\r\nb\r\n"));
  EXPECT_TRUE(HasBareLf("\n"));
  EXPECT_TRUE(HasBareLf("a\r\nb\n"));
  EXPECT_FALSE(HasBareLf("a\r"));
  EXPECT_FALSE(HasUnterminatedQuote("1;a=\"b\"\r\n"));
  EXPECT_FALSE(HasUnterminatedQuote("1;a=\"b\\\"c\"\r\n"));  // an escaped quote inside
  EXPECT_TRUE(HasUnterminatedQuote("\r\n1;a=\"b\\\"\r\n"));
  EXPECT_FALSE(HasUnterminatedQuote("1;a=\"b"));  // the line has not ended yet
}

TEST(FramingTest, ClassifiesWhatBeastHoldsBack) {
  EXPECT_EQ(ClassifyPending("0\r\nX-Trailer: a"), FramingExcess::kTrailers);
  EXPECT_EQ(ClassifyPending("\r\n000;e=1\r\nX: a"), FramingExcess::kTrailers);
  EXPECT_EQ(ClassifyPending("10;ext"), FramingExcess::kExtensions);
  EXPECT_EQ(ClassifyPending("0000000000000000000001"), FramingExcess::kSizeLine);
  EXPECT_EQ(ClassifyPending("0000"), FramingExcess::kSizeLine);  // the line has not ended
  EXPECT_EQ(FramingExcessError(FramingExcess::kTrailers, 1024).status, 431);
  EXPECT_EQ(FramingExcessError(FramingExcess::kSizeLine, 1024).status, 400);
  EXPECT_EQ(ChunkLineCost(16, 3), 3u);
  EXPECT_EQ(ChunkLineCost(20, 3), 7u);
}

TEST(FramingTest, HeadFramingCountsFieldsCaseInsensitively) {
  HeadFraming ok;
  ok.OnField("HOST", "example.com:8080");
  ok.OnField("transfer-ENCODING", " , chunked ,");
  ok.OnField("Expect", "100-Continue");
  EXPECT_EQ(ok.Error(11), "");
  EXPECT_TRUE(ok.expect_continue());
  HeadFraming spaced;
  spaced.OnField("Host", "a b");
  EXPECT_NE(spaced.Error(11).find("whitespace"), std::string_view::npos);
  HeadFraming none;
  EXPECT_EQ(none.Error(10), "");
  EXPECT_NE(none.Error(11), "");
}

}  // namespace
}  // namespace hookrelay::http
