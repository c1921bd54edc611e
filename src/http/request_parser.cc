#include "http/request_parser.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <limits>

#include "common/units.h"

namespace hookrelay::http {
namespace {

namespace bhttp = boost::beast::http;

std::string ToStdString(boost::beast::string_view s) { return std::string(s.data(), s.size()); }

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string_view Bytes(const boost::beast::flat_buffer& buffer) {
  return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

}  // namespace

void RequestParser::on_request_impl(bhttp::verb, string_view method, string_view target,
                                    int version, error_code&) {
  request_.method.assign(method.data(), method.size());
  request_.target.assign(target.data(), target.size());
  request_.version = version;
  request_line_done_ = true;
}

void RequestParser::on_field_impl(bhttp::field, string_view name, string_view value,
                                  error_code& ec) {
  if (is_header_done()) {
    // A trailer field: counted against the header limit, then dropped, so that a trailer can
    // never pass for a header (Host, Content-Type, a signature).
    const uint64_t size = name.size() + value.size() + 4;  // ": " and CRLF
    if (size > framing_left_) {
      ec = bhttp::error::header_limit;
      return;
    }
    framing_left_ -= size;
    return;
  }
  framing_.OnField({name.data(), name.size()}, {value.data(), value.size()});
  request_.headers.emplace_back(ToStdString(name), ToStdString(value));
}

void RequestParser::on_chunk_header_impl(uint64_t, string_view extensions, error_code& ec) {
  // Beast hands over the extensions where they lie in the input, right after the size digits
  // (preceded by the previous chunk's CRLF or the start of the input).
  const char* digits_end = extensions.data();
  const char* digits = digits_end;
  while (digits > input_begin_ && IsHexDigit(digits[-1])) --digits;
  const uint64_t cost =
      ChunkLineCost(static_cast<uint64_t>(digits_end - digits), extensions.size());
  if (cost > framing_left_) {
    if (extensions.size() > framing_left_) {
      ext_too_long_ = true;
    } else {
      size_line_too_long_ = true;
    }
    ec = bhttp::error::bad_chunk_extension;
    return;
  }
  framing_left_ -= cost;
}

size_t RequestParser::AppendBody(string_view body, error_code& ec) {
  const uint64_t needed = request_.body.size() + body.size();
  if (needed > reservation_.held()) {
    // The reservation grows geometrically and the body's capacity with it, so the two agree.
    out_of_body_memory_ = reservation_.Cover(needed, body_cap_);
    if (out_of_body_memory_ != BodyBudget::Refusal::kNone) {
      ec = bhttp::error::body_limit;
      return 0;
    }
    request_.body.reserve(static_cast<size_t>(reservation_.held()));
  }
  request_.body.append(body.data(), body.size());
  return body.size();
}

void RequestReader::Begin(Request& request, BodyReservation& reservation) {
  request = Request{};
  request.headers.reserve(16);
  request_ = &request;
  parser_.emplace(request, reservation);
  // One more than our limit, so that our own check (which counts the whole head) is the one
  // that fires.
  parser_->header_limit(static_cast<uint32_t>(
      std::min<uint64_t>(header_limit_ + 1, std::numeric_limits<uint32_t>::max())));
  parser_->body_limit(boost::none);  // checked against the handler's limit after the head
  parser_->eager(false);             // stop after the head so the handler sees it before the body
  head_bytes_ = 0;
}

RequestReader::Step RequestReader::Advance(boost::beast::flat_buffer& buffer) {
  auto error = [](int status, std::string code, std::string message) {
    Step step;
    step.event = Event::kError;
    step.error = {status, std::move(code), std::move(message)};
    return step;
  };
  auto need_more = [](size_t n) {
    Step step;
    step.read_size = n;
    return step;
  };
  boost::system::error_code ec;
  if (!parser_->is_header_done()) {
    if (buffer.size() == 0) return need_more(kHeadReadSize);  // nothing of the head yet
    parser_->set_input(static_cast<const char*>(buffer.data().data()));
    const size_t used = parser_->put(buffer.data(), ec);
    if (HasObsFold(Bytes(buffer).substr(0, used))) {
      return error(400, "bad_request", "obsolete line folding in a header field");
    }
    buffer.consume(used);
    head_bytes_ += used;
    if (ec == bhttp::error::need_more) {
      if (head_bytes_ + buffer.size() > header_limit_) return {Event::kError, 0, HeadTooLarge()};
      if (HasBareLf(Bytes(buffer))) {
        return error(400, "bad_request",
                     "malformed HTTP request: a line ends in a bare LF, not CRLF");
      }
      return need_more(kHeadReadSize);
    }
    if (ec == bhttp::error::header_limit) return {Event::kError, 0, HeadTooLarge()};
    if (ec) return error(400, "bad_request", "malformed HTTP request: " + ec.message());
    if (head_bytes_ > header_limit_) return {Event::kError, 0, HeadTooLarge()};
    return {Event::kHead};
  }
  while (true) {
    if (parser_->is_done()) return {Event::kComplete};
    if (buffer.size() == 0) {
      const auto remaining = parser_->content_length_remaining();
      return need_more(remaining && *remaining <= kHeadReadSize ? kHeadReadSize : kBodyReadSize);
    }
    parser_->set_input(static_cast<const char*>(buffer.data().data()));
    const size_t used = parser_->put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == bhttp::error::need_more) {
      if (used > 0) continue;
      // Beast holds a chunk-size line or the trailer section until its end has arrived: bound
      // what it may wait for by what is left of the header limit.
      if (buffer.size() > parser_->framing_left() + kChunkLineSlack) {
        return {Event::kError, 0,
                FramingExcessError(ClassifyPending(Bytes(buffer)), header_limit_)};
      }
      // Nothing of the pending chunk-size line or trailer section was taken, so it starts the
      // buffer: a bare LF there can never become valid framing.
      if (HasBareLf(Bytes(buffer))) {
        return error(400, "bad_request",
                     "malformed chunked body: a chunk-size line or trailer field ends in a bare "
                     "LF, not CRLF");
      }
      if (HasUnterminatedQuote(Bytes(buffer))) {
        return error(400, "bad_request",
                     "malformed chunked body: a chunk extension's quoted value does not end on "
                     "its line");
      }
      return need_more(kHeadReadSize);
    }
    if (ec == bhttp::error::header_limit) {  // only trailer fields get here
      return {Event::kError, 0, FramingExcessError(FramingExcess::kTrailers, header_limit_)};
    }
    if (ec == bhttp::error::bad_chunk_extension && parser_->ext_too_long()) {
      return {Event::kError, 0, FramingExcessError(FramingExcess::kExtensions, header_limit_)};
    }
    if (ec == bhttp::error::bad_chunk_extension && parser_->size_line_too_long()) {
      return {Event::kError, 0, FramingExcessError(FramingExcess::kSizeLine, header_limit_)};
    }
    if (ec == bhttp::error::body_limit &&
        parser_->out_of_body_memory() != BodyBudget::Refusal::kNone) {
      Step step;
      step.event = Event::kOutOfBodyMemory;
      step.refusal = parser_->out_of_body_memory();
      return step;
    }
    if (ec == bhttp::error::body_limit) return {Event::kBodyTooLarge};
    if (ec) return error(400, "bad_request", "malformed HTTP request body: " + ec.message());
  }
}

ParseError RequestReader::HeadTooLarge() const {
  if (!parser_->request_line_done()) {
    return {414, "uri_too_long",
            "request line too long (limit " + FormatByteSize(header_limit_) + ")"};
  }
  return {431, "headers_too_large",
          "request headers too large (limit " + FormatByteSize(header_limit_) + ")"};
}

std::optional<ParseError> RequestReader::CompleteHead() {
  Request& request = *request_;
  auto bad = [](std::string message) { return ParseError{400, "bad_request", std::move(message)}; };
  if (std::string_view error = parser_->framing().Error(request.version); !error.empty()) {
    return bad(std::string(error));
  }
  if (auto cl = parser_->content_length()) request.content_length = *cl;
  request.chunked = parser_->chunked();
  if (!SplitTarget(request.target, request.path, request.query)) {
    return bad("malformed request target");
  }
  // RFC 9112 §3.2.4: the asterisk-form is only for a server-wide OPTIONS.
  if (request.target == "*" && request.method != "OPTIONS") {
    return bad("the request target \"*\" is only allowed with OPTIONS");
  }
  if (!DecodePathSegments(request.path, request.segments)) {
    return bad("malformed percent-encoding in the request path");
  }
  return std::nullopt;
}

bool RequestReader::has_body() const {
  return request_->chunked || (request_->content_length && *request_->content_length > 0);
}

void RequestReader::StartBody(uint64_t body_limit) {
  parser_->body_limit(body_limit);
  parser_->set_body_cap(request_->content_length ? *request_->content_length : body_limit);
  parser_->set_framing_left(header_limit_ > head_bytes_ ? header_limit_ - head_bytes_ : 0);
  parser_->eager(true);
}

bool SplitTarget(std::string_view target, std::string& path, std::string& query) {
  if (target.empty()) return false;
  if (target != "*" && target.front() != '/') {
    size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
    size_t slash = target.find('/', scheme_end + 3);
    size_t qmark = target.find('?', scheme_end + 3);
    if (slash == std::string_view::npos || (qmark != std::string_view::npos && qmark < slash)) {
      path = "/";
      query = qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1);
      return true;
    }
    target = target.substr(slash);
  }
  size_t qmark = target.find('?');
  path = target.substr(0, qmark);
  query = qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1);
  return true;
}

}  // namespace hookrelay::http
