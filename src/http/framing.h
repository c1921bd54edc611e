#pragma once

// The framing checks hookrelay adds to Beast's parser (RFC 9112), where other HTTP
// implementations in front of or behind it could read the same bytes differently: which header
// fields make a head unframeable (Transfer-Encoding, Host, Authorization, Content-Length), line
// endings, obsolete line folding, and the bounds on a chunked body's framing (chunk-size lines,
// extensions, trailers). Pure: bytes and fields in, a verdict out.

#include <cstdint>
#include <string>
#include <string_view>

namespace hookrelay::http {

// A request refused while it is read: the status, the JSON error code and the message.
struct ParseError {
  int status = 400;
  std::string code;
  std::string message;
};

// Watches the head's fields as they are parsed and says why the head must be refused with 400
// although Beast accepted it.
class HeadFraming {
 public:
  // One header field (not a trailer field), in arrival order.
  void OnField(std::string_view name, std::string_view value);
  // Empty if the head may be read; else the reason, for an HTTP/1.`version - 10` request.
  std::string_view Error(int version) const;
  // The request sent Expect: 100-continue.
  bool expect_continue() const { return expect_continue_; }

 private:
  void CountCodings(std::string_view list);

  int te_fields_ = 0;
  int te_codings_ = 0;
  int hosts_ = 0;
  int authorizations_ = 0;
  int content_lengths_ = 0;
  bool content_length_list_ = false;
  bool host_list_ = false;
  bool host_space_ = false;
  bool te_other_ = false;
  bool expect_continue_ = false;
};

// True when a request head holds obsolete line folding: a line that starts with SP or HTAB
// (RFC 9112 §5.2). Beast joins such lines; hookrelay refuses them, since other parsers in front
// of or behind it may not.
bool HasObsFold(std::string_view head);

// True when `bytes` hold a line feed not preceded by a carriage return. HTTP/1.1 framing (the
// head, chunk-size lines, trailers) ends lines with CRLF only. Beast treats a bare LF there as an
// ordinary byte and waits for a CRLF that may never come, so the connection would sit until a
// timeout; and a proxy in front that ends lines at a bare LF would read different framing.
bool HasBareLf(std::string_view bytes);

// True when the first line of `pending` (a chunk-size line, after the CRLF that may end the
// previous chunk's data) is complete and holds a quoted chunk-extension value that does not close
// before the line ends. A quoted-string cannot hold CR or LF (RFC 9110 §5.6.4), but Beast reads
// on past the line for the closing quote and waits for more input.
bool HasUnterminatedQuote(std::string_view pending);

// Size digits a chunk-size line may have for free (a 64-bit size needs 16); leading zeros past
// this count against what is left of the header limit, like chunk extensions.
inline constexpr uint64_t kFreeChunkSizeDigits = 16;
// Beyond what is left of the header limit, a pending chunk-size line may hold this much (the
// CRLF ending the previous chunk, the size digits).
inline constexpr uint64_t kChunkLineSlack = 64;

// What a chunk-size line costs against what is left of the header limit: its extensions, and
// its size digits past kFreeChunkSizeDigits.
inline uint64_t ChunkLineCost(uint64_t size_digits, uint64_t extensions) {
  return extensions + (size_digits > kFreeChunkSizeDigits ? size_digits - kFreeChunkSizeDigits : 0);
}

// Which part of a chunked body's framing passed what is left of the header limit.
enum class FramingExcess { kTrailers, kExtensions, kSizeLine };

// What the bytes Beast is holding back (`pending`, which starts at a chunk-size line or the
// trailer section) are: the trailer section when the last chunk's size line ("0", "000;ext") is
// complete and its fields are not; else a chunk-size line, too long by its extensions once one
// has begun, else by its size digits.
FramingExcess ClassifyPending(std::string_view pending);

// The answer to a chunked body whose framing passed the header limit: 431 for the trailer
// section, 400 for a chunk-size line (its size digits or its extensions).
ParseError FramingExcessError(FramingExcess what, uint64_t header_limit);

}  // namespace hookrelay::http
