#pragma once

// Incremental HTTP/1.1 request parsing (Boost.Beast's parser plus hookrelay's framing checks,
// framing.h): bytes in, a Request or a ParseError out. Pure: no sockets, no clock, no handler;
// the session (session.h) reads the bytes and decides what to do with each step.

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http/body_budget.h"
#include "http/framing.h"
#include "http/request.h"

namespace hookrelay::http {

// Parses a request straight into a Request: fields land in arrival order with their original
// names, and the body is appended to Request::body without an intermediate message object.
// Also notes what Beast accepts but hookrelay refuses (HeadFraming), drops trailer fields,
// bounds chunk extensions and trailers by what is left of the header limit, and reserves the
// body's memory from a BodyReservation as it arrives.
class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  RequestParser(Request& request, BodyReservation& reservation)
      : request_(request), reservation_(reservation) {}
  const HeadFraming& framing() const { return framing_; }
  bool request_line_done() const { return request_line_done_; }
  // A chunk-size line passed what is left of the header limit: by its extensions (or else by
  // its size digits).
  bool ext_too_long() const { return ext_too_long_; }
  bool size_line_too_long() const { return size_line_too_long_; }
  // The bytes about to be passed to put(): a chunk-size line's digits are found by looking back
  // from its extensions, never before this.
  void set_input(const char* begin) { input_begin_ = begin; }
  // Why the body stopped at body_limit: a limit of its BodyBudget (kNone: the body limit).
  BodyBudget::Refusal out_of_body_memory() const { return out_of_body_memory_; }
  uint64_t framing_left() const { return framing_left_; }
  // Bytes of chunk extensions and trailer fields still allowed; set once the head is read.
  void set_framing_left(uint64_t n) { framing_left_ = n; }
  // The largest body this request may have (its reservation grows up to it): the
  // Content-Length, or for a chunked body its body limit.
  void set_body_cap(uint64_t n) { body_cap_ = n; }

 private:
  using error_code = boost::system::error_code;
  using string_view = boost::beast::string_view;

  void on_request_impl(boost::beast::http::verb, string_view method, string_view target,
                       int version, error_code&) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(boost::beast::http::field, string_view name, string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<uint64_t>&, error_code&) override {}
  // Memory is reserved (and allocated) as the body arrives, never from Content-Length alone.
  size_t on_body_impl(string_view body, error_code& ec) override { return AppendBody(body, ec); }
  void on_chunk_header_impl(uint64_t, string_view extensions, error_code& ec) override;
  size_t on_chunk_body_impl(uint64_t, string_view body, error_code& ec) override {
    return AppendBody(body, ec);
  }
  void on_finish_impl(error_code&) override {}

  size_t AppendBody(string_view body, error_code& ec);

  Request& request_;
  BodyReservation& reservation_;
  HeadFraming framing_;
  uint64_t body_cap_ = 0;
  uint64_t framing_left_ = 0;
  const char* input_begin_ = nullptr;
  bool request_line_done_ = false;
  bool ext_too_long_ = false;
  bool size_line_too_long_ = false;
  BodyBudget::Refusal out_of_body_memory_ = BodyBudget::Refusal::kNone;
};

// Reads requests, one after another, from a connection's bytes: the caller appends what arrives
// to a buffer and calls Advance, which consumes what it parsed (pipelined bytes stay in the
// buffer for the next request) and says what the caller must do next.
//
//   reader.Begin(request, reservation);
//   for (;;) switch (Step s = reader.Advance(buffer); s.event) {
//     case kNeedMore: read up to s.read_size bytes into buffer; break;
//     case kHead:     CompleteHead(), then the handler's decision: StartBody(...) or answer;
//     case kComplete: the request is in `request`; answer it, then Begin the next one.
//     default:        answer the error and close.
//   }
class RequestReader {
 public:
  static constexpr size_t kHeadReadSize = 8 * 1024;
  static constexpr size_t kBodyReadSize = 64 * 1024;

  enum class Event {
    kNeedMore,         // read at most `read_size` more bytes, then Advance again
    kHead,             // the head is read (call CompleteHead); Advance goes on with the body
    kComplete,         // the whole request is read
    kError,            // refuse the request with `error`; the connection cannot go on
    kBodyTooLarge,     // the body passed the limit given to StartBody (413)
    kOutOfBodyMemory,  // the body did not fit the BodyBudget (`refusal`; 503)
  };
  struct Step {
    Event event = Event::kNeedMore;
    size_t read_size = 0;
    ParseError error;
    BodyBudget::Refusal refusal = BodyBudget::Refusal::kNone;
  };

  // `header_limit` bounds the request line and fields together (414 past it in the request
  // line, else 431), and then a chunked body's extensions and trailers with them.
  explicit RequestReader(uint64_t header_limit) : header_limit_(header_limit) {}

  // Starts reading a new request into `request` (reset here), its body reserved from
  // `reservation`. Both must outlive the request's reading.
  void Begin(Request& request, BodyReservation& reservation);
  Step Advance(boost::beast::flat_buffer& buffer);

  // After kHead: fills in the request's framing and target (content_length, chunked, path,
  // query, segments); an error when the head must be refused (a framing check of HeadFraming,
  // a malformed target or percent-encoding, "*" other than with OPTIONS).
  std::optional<ParseError> CompleteHead();
  // After kHead and CompleteHead, for a request with a body: read it, up to `body_limit` bytes.
  void StartBody(uint64_t body_limit);

  bool keep_alive() const { return parser_->keep_alive(); }
  bool expect_continue() const { return parser_->framing().expect_continue(); }
  // The request announced a body (chunked, or a Content-Length above 0). After CompleteHead.
  bool has_body() const;
  // Bytes of the request line and fields read so far.
  uint64_t head_bytes() const { return head_bytes_; }

 private:
  ParseError HeadTooLarge() const;

  const uint64_t header_limit_;
  Request* request_ = nullptr;
  std::optional<RequestParser> parser_;
  uint64_t head_bytes_ = 0;
};

// Splits a request-target into its path and query. Origin-form ("/p?q") is the norm; the
// absolute-form ("http://h/p?q") that proxies send is accepted too. False when neither.
bool SplitTarget(std::string_view target, std::string& path, std::string& query);

}  // namespace hookrelay::http
