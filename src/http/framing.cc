#include "http/framing.h"

#include <cstring>

#include "common/units.h"
#include "http/request.h"

namespace hookrelay::http {

void HeadFraming::OnField(std::string_view name, std::string_view value) {
  if (EqualsIgnoreCase(name, "expect") && EqualsIgnoreCase(value, "100-continue")) {
    expect_continue_ = true;
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    ++te_fields_;
    CountCodings(value);
  } else if (EqualsIgnoreCase(name, "host")) {
    ++hosts_;
    for (char c : value) {
      if (c == ',') host_list_ = true;
      if (c == ' ' || c == '\t') host_space_ = true;
    }
  } else if (EqualsIgnoreCase(name, "authorization")) {
    ++authorizations_;
  } else if (EqualsIgnoreCase(name, "content-length")) {
    // Beast takes "2, 2" and a repeated field of the same value as one length (RFC 9110
    // §8.6 allows a recipient to); a proxy in front may have taken it as an error or used the
    // other field, so both are refused (as Host and Authorization are).
    ++content_lengths_;
    if (value.find(',') != std::string_view::npos) content_length_list_ = true;
  }
}

std::string_view HeadFraming::Error(int version) const {
  if (te_fields_ > 0) {
    // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing; §6.3: a
    // coding list not ending in chunked cannot be framed, and hookrelay implements no coding
    // but chunked.
    if (version < 11) return "Transfer-Encoding is not allowed in an HTTP/1.0 request";
    if (te_other_ || te_codings_ != 1) {
      return "unsupported Transfer-Encoding: only \"chunked\" is implemented";
    }
  }
  // RFC 9112 §3.2: exactly one Host field, holding one host[:port]; HTTP/1.0 may omit it.
  if (hosts_ > 1) return "more than one Host header field";
  if (hosts_ == 0 && version >= 11) return "missing Host header field (required in HTTP/1.1)";
  if (host_list_) return "the Host header field holds more than one value";
  if (host_space_) return "malformed Host header field: it holds whitespace";
  // Which of two credentials counts would depend on the reader.
  if (authorizations_ > 1) return "more than one Authorization header field";
  if (content_lengths_ > 1) return "more than one Content-Length header field";
  if (content_length_list_) return "the Content-Length header field holds a list";
  return {};
}

void HeadFraming::CountCodings(std::string_view list) {
  while (true) {
    size_t comma = list.find(',');
    std::string_view coding = list.substr(0, comma);
    while (!coding.empty() && (coding.front() == ' ' || coding.front() == '\t')) {
      coding.remove_prefix(1);
    }
    while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t')) {
      coding.remove_suffix(1);
    }
    if (!coding.empty()) {  // empty list elements are allowed (RFC 9110 §5.6.1)
      ++te_codings_;
      if (!EqualsIgnoreCase(coding, "chunked")) te_other_ = true;
    }
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

bool HasObsFold(std::string_view head) {
  if (head.empty()) return false;
  const char* p = head.data();
  const char* end = p + head.size();
  while (true) {
    const char* lf = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    if (lf == nullptr || lf + 1 >= end) return false;
    if (lf[1] == ' ' || lf[1] == '\t') return true;
    p = lf + 1;
  }
}

bool HasBareLf(std::string_view bytes) {
  if (bytes.empty()) return false;
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  for (const char* at = p; at < end; ++at) {
    const auto* lf = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)));
    if (lf == nullptr) return false;
    if (lf == p || lf[-1] != '\r') return true;
    at = lf;
  }
  return false;
}

bool HasUnterminatedQuote(std::string_view pending) {
  if (pending.substr(0, 2) == "\r\n") pending.remove_prefix(2);
  const size_t eol = pending.find("\r\n");
  if (eol == std::string_view::npos) return false;
  const std::string_view line = pending.substr(0, eol);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '\\') {
      ++i;  // a quoted-pair
    } else if (line[i] == '"') {
      quoted = !quoted;
    }
  }
  return quoted;
}

FramingExcess ClassifyPending(std::string_view pending) {
  if (pending.substr(0, 2) == "\r\n") pending.remove_prefix(2);
  const size_t eol = pending.find("\r\n");
  const std::string_view line = pending.substr(0, eol);
  const size_t digits = line.find_first_not_of('0');
  if (eol != std::string_view::npos && digits != 0 &&
      (digits == std::string_view::npos || line[digits] == ';' || line[digits] == ' ' ||
       line[digits] == '\t')) {
    return FramingExcess::kTrailers;
  }
  return line.find(';') != std::string_view::npos ? FramingExcess::kExtensions
                                                  : FramingExcess::kSizeLine;
}

ParseError FramingExcessError(FramingExcess what, uint64_t header_limit) {
  const std::string limit = FormatByteSize(header_limit);
  switch (what) {
    case FramingExcess::kTrailers:
      return {431, "headers_too_large",
              "request headers and trailer fields too large (limit " + limit + ")"};
    case FramingExcess::kExtensions:
      return {400, "bad_request",
              "chunk extensions too long (they count against the header limit of " + limit + ")"};
    case FramingExcess::kSizeLine: break;
  }
  return {400, "bad_request",
          "chunk size line too long (it counts against the header limit of " + limit + ")"};
}

}  // namespace hookrelay::http
