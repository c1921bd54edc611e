#include "store/row_codec.h"

#include <algorithm>
#include <chrono>

namespace hookrelay::store {

namespace {

void PutLength(std::string& out, size_t n) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

bool GetField(std::string_view& in, std::string* field) {
  if (in.size() < 4) return false;
  size_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<size_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  in.remove_prefix(4);
  if (in.size() < n) return false;
  field->assign(in.data(), n);
  in.remove_prefix(n);
  return true;
}

}  // namespace

std::string EncodeHeaders(const std::vector<Header>& headers) {
  std::string out;
  for (const Header& h : headers) {
    PutLength(out, h.name.size());
    out += h.name;
    PutLength(out, h.value.size());
    out += h.value;
  }
  return out;
}

Result<std::vector<Header>> DecodeHeaders(std::string_view in) {
  std::vector<Header> headers;
  while (!in.empty()) {
    Header h;
    if (!GetField(in, &h.name) || !GetField(in, &h.value)) {
      return Status::Internal("corrupt headers blob in the database");
    }
    headers.push_back(std::move(h));
  }
  return headers;
}

std::string EncodeRouteMisses(const std::vector<RouteMiss>& misses) {
  std::string out;
  for (const RouteMiss& m : misses) {
    for (const std::string* f : {&m.route, &m.destination, &m.reason}) {
      PutLength(out, f->size());
      out += *f;
    }
  }
  return out;
}

Result<std::vector<RouteMiss>> DecodeRouteMisses(std::string_view in) {
  std::vector<RouteMiss> misses;
  while (!in.empty()) {
    RouteMiss m;
    if (!GetField(in, &m.route) || !GetField(in, &m.destination) || !GetField(in, &m.reason)) {
      return Status::Internal("corrupt route misses blob in the database");
    }
    misses.push_back(std::move(m));
  }
  return misses;
}

std::optional<std::string_view> TypePrefix(std::string_view pattern) {
  if (pattern.empty() || pattern.back() != '*') return std::nullopt;
  pattern.remove_suffix(1);
  return pattern;
}

std::optional<policy::BreakerState> ParseBreakerStateName(std::string_view s) {
  for (policy::BreakerState state : {policy::BreakerState::kClosed, policy::BreakerState::kOpen,
                                     policy::BreakerState::kHalfOpen}) {
    if (s == policy::BreakerStateName(state)) return state;
  }
  return std::nullopt;
}

int64_t UnixMinute(TimePoint t) {
  return std::chrono::floor<std::chrono::minutes>(t).time_since_epoch().count();
}

Status CheckRejections(const std::vector<Rejection>& rejections, int keep_per_source) {
  if (keep_per_source < 1) {
    return Status::InvalidArgument("keep_per_source must be at least 1", "keep_per_source");
  }
  for (const Rejection& r : rejections) {
    if (r.source.empty()) return Status::InvalidArgument("rejection without a source", "source");
    if (r.reason.empty()) return Status::InvalidArgument("rejection without a reason", "reason");
  }
  return Status::Ok();
}

Status BadCursor() {
  return Status::InvalidArgument("not a cursor this API gave out (a next_cursor value)", "cursor");
}

std::string JsonStringArray(const std::vector<std::string>& names) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "[";
  for (const std::string& n : names) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char ch : n) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += ch;
      } else if (c < 0x20) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
      } else {
        out += ch;
      }
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace hookrelay::store
