// Fuzzes HTTP/1.1 request parsing and framing in-process (src/http/request_parser.cc and
// framing.cc: request line, header fields, Content-Length, chunked bodies with extensions and
// trailers, pipelining, the body's memory budget): each input is the bytes of one connection,
// fed to an http::RequestReader the way a session does, with no socket.
//
// Each input is read twice: all at once, and in pieces of a size (1 to 4096 bytes) picked from
// a hash of the input, as a connection's reads would split it. Both readings must agree on every
// request they both complete. What the reader hands over must be what the framing says: header
// names are tokens, values hold no CR, LF or NUL, the complete request has exactly the fields
// seen when its head ended (no trailer field became a header), the body's length agrees with its
// Content-Length and stays within the body limit, never both chunked and Content-Length. Every
// refusal is the client's (400, 413, 414, 431), except a 503 for body memory, which only comes
// while another reservation holds part of the budget; and when reading ends the budget holds
// nothing but that other reservation.
//
// A few paths are refused after the head, as the ingest and API handlers do: "/reject" (the
// connection closes if a body was announced, else the next request is read).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "http/body_budget.h"
#include "http/request_parser.h"

namespace {

using namespace hookrelay;
using Event = http::RequestReader::Event;

constexpr uint64_t kHeaderLimit = 1024;
constexpr uint64_t kBodyLimit = 2048;
constexpr uint64_t kMaxBodyMemory = 4096;
constexpr uint64_t kMaxBodyMemoryPerClient = 3072;

[[noreturn]] void Fail(const char* why, std::string_view detail) {
  std::fprintf(stderr, "http_request_fuzzer: %s: %.*s\n", why, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

void CheckHead(const http::RequestHead& head) {
  if (!IsToken(head.method)) Fail("method is not a token", head.method);
  if (head.target.empty()) Fail("empty target", head.target);
  if (head.target == "*" && head.method != "OPTIONS") Fail("\"*\" target", head.method);
  for (const auto& [name, value] : head.headers) {
    if (!IsToken(name)) Fail("header name is not a token", name);
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      Fail("CR, LF or NUL in a header value", value);
    }
  }
}

// What one request became: enough to compare two readings.
struct Read {
  Event event = Event::kNeedMore;
  int status = 0;  // of a refusal
  std::string method, target, body;
  decltype(http::RequestHead::headers) headers;
  bool operator==(const Read& o) const {
    return event == o.event && status == o.status && method == o.method && target == o.target &&
           body == o.body && headers == o.headers;
  }
};

// Reads every request of `input`, handing over at most `piece` bytes at a time.
std::vector<Read> ReadAll(std::string_view input, size_t piece, uint64_t other_holds,
                          bool other_is_same_client) {
  std::atomic<uint64_t> total{0};
  http::BodyBudget budget(total, kMaxBodyMemory, kMaxBodyMemoryPerClient);
  http::ClientKey me{};
  http::ClientKey other{};
  if (!other_is_same_client) other[0] = 1;
  if (other_holds > 0 && budget.Take(other, other_holds) != http::BodyBudget::Refusal::kNone) {
    Fail("cannot set up the other reservation", "");
  }
  std::vector<Read> reads;
  {
    http::BodyReservation reservation(budget, me);
    http::RequestReader reader(kHeaderLimit);
    boost::beast::flat_buffer buffer;
    size_t fed = 0;
    bool open = true;
    while (open) {
      http::Request request;
      reader.Begin(request, reservation);
      decltype(http::RequestHead::headers) head_fields;
      Read read;
      while (true) {
        http::RequestReader::Step step = reader.Advance(buffer);
        if (step.event == Event::kNeedMore) {
          if (step.read_size == 0) Fail("asked for 0 bytes", request.target);
          if (fed == input.size()) {
            open = false;  // EOF: a partial request is never answered
            break;
          }
          const size_t n = std::min({input.size() - fed, step.read_size, piece});
          std::memcpy(buffer.prepare(n).data(), input.data() + fed, n);
          buffer.commit(n);
          fed += n;
          continue;
        }
        if (step.event == Event::kHead) {
          if (auto error = reader.CompleteHead()) {
            step.event = Event::kError;
            step.error = *error;
          } else {
            CheckHead(request);
            head_fields = request.headers;
            if (request.chunked && request.content_length) {
              Fail("both chunked and Content-Length", request.target);
            }
            if (request.path == "/reject") {
              read.event = Event::kHead;
              if (reader.has_body()) open = false;  // the body was not read: close
              reservation.Release();
              break;
            }
            if (request.content_length && *request.content_length > kBodyLimit) {
              read.event = Event::kBodyTooLarge;  // 413 before the body
              open = false;
              break;
            }
            if (reader.has_body()) reader.StartBody(kBodyLimit);
            continue;
          }
        }
        read.event = step.event;
        if (step.event == Event::kComplete) {
          CheckHead(request);
          if (request.headers != head_fields) {
            Fail("the fields changed after the head (a trailer became a header)", request.target);
          }
          if (request.content_length && request.body.size() != *request.content_length) {
            Fail("body length differs from Content-Length", request.body);
          }
          if (request.body.size() > kBodyLimit) Fail("body past the limit", request.target);
          if (reservation.held() < request.body.size()) {
            Fail("the body holds more than its reservation", request.target);
          }
          read.method = request.method;
          read.target = request.target;
          read.body = request.body;
          read.headers = request.headers;
          reservation.Release();  // answered
          break;
        }
        open = false;  // every other outcome is answered with a refusal and the connection closed
        if (step.event == Event::kError) {
          read.status = step.error.status;
          if (step.error.code.empty() || step.error.message.empty()) {
            Fail("a refusal without a code or message", step.error.message);
          }
          if (read.status != 400 && read.status != 413 && read.status != 414 &&
              read.status != 431) {
            Fail("an unexpected status for client input", step.error.message);
          }
        } else if (step.event == Event::kOutOfBodyMemory) {
          if (other_holds == 0) Fail("out of body memory with nothing else held", request.target);
        } else if (step.event != Event::kBodyTooLarge) {
          Fail("an unknown step", request.target);
        }
        break;
      }
      if (read.event != Event::kNeedMore) reads.push_back(std::move(read));
    }
  }
  if (total.load() != other_holds) Fail("body memory left reserved after the connection", "");
  budget.Give(other, other_holds);
  if (total.load() != 0 || budget.clients() != 0) Fail("the budget does not balance", "");
  return reads;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The way to split the input and the memory held by someone else: from a hash of the input,
  // so that the seeds stay plain HTTP.
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : input) hash = (hash ^ c) * 1099511628211ull;
  constexpr size_t kPieces[] = {1, 2, 3, 7, 16, 100, 512, 4096};
  const size_t piece = kPieces[hash & 7];
  // Mostly nothing; else enough of the client's share (3072) or of the total (4096) that a body
  // of up to 2048 bytes may not fit.
  constexpr uint64_t kOther[] = {0, 0, 0, 0, 1024, 2048, 2560, 3072};
  const uint64_t other = kOther[(hash >> 3) & 7];
  const bool same_client = ((hash >> 6) & 1) != 0;

  const std::vector<Read> whole = ReadAll(input, input.size() + 1, other, same_client);
  const std::vector<Read> split = ReadAll(input, piece, other, same_client);
  // Where the readings differ, it is in how a refusal comes (a check may see a pending line
  // earlier or later); the requests both complete must be the same.
  for (size_t i = 0; i < whole.size() && i < split.size(); ++i) {
    const bool both_complete =
        whole[i].event == Event::kComplete && split[i].event == Event::kComplete;
    if (both_complete && !(whole[i] == split[i])) {
      Fail("reading in pieces gave another request", whole[i].target);
    }
    if (whole[i].event != split[i].event &&
        (whole[i].event == Event::kComplete || split[i].event == Event::kComplete)) {
      // A request read completely one way must not be refused the other way... unless body
      // memory ran out, which depends on how the reservation grew.
      const Event other_event =
          whole[i].event == Event::kComplete ? split[i].event : whole[i].event;
      if (other_event != Event::kOutOfBodyMemory) {
        Fail("a request completes read at once but not in pieces (or the reverse)",
             whole[i].target);
      }
    }
    if (whole[i].event != Event::kComplete || split[i].event != Event::kComplete) break;
  }
  return 0;
}
