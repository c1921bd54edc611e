#include "common/id.h"

namespace hookrelay {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

int Digit(char c) {
  for (int i = 0; i < 32; ++i) {
    if (kAlphabet[i] == c) return i;
  }
  return -1;
}

}  // namespace

std::string EncodeUlid(const UlidBits& bits) {
  uint64_t ms = bits.ms & ((uint64_t{1} << 48) - 1);
  uint64_t hi = bits.hi;
  uint64_t lo = bits.lo;
  std::string out(26, '0');
  // 48-bit time → 10 characters (50 bits, top 2 zero).
  for (int i = 9; i >= 0; --i) {
    out[i] = kAlphabet[ms & 31];
    ms >>= 5;
  }
  // 80 bits → 16 characters.
  for (int i = 25; i >= 10; --i) {
    out[i] = kAlphabet[lo & 31];
    lo = (lo >> 5) | ((hi & 31) << 59);
    hi >>= 5;
  }
  return out;
}

std::optional<UlidBits> DecodeUlid(std::string_view text) {
  if (text.size() != 26 || text[0] > '7') return std::nullopt;
  UlidBits bits;
  for (int i = 0; i < 10; ++i) {
    const int d = Digit(text[i]);
    if (d < 0) return std::nullopt;
    bits.ms = (bits.ms << 5) | static_cast<uint64_t>(d);
  }
  uint64_t hi = 0;
  for (int i = 10; i < 26; ++i) {
    const int d = Digit(text[i]);
    if (d < 0) return std::nullopt;
    hi = (hi << 5) | (bits.lo >> 59);
    bits.lo = (bits.lo << 5) | static_cast<uint64_t>(d);
  }
  bits.hi = static_cast<uint16_t>(hi);
  return bits;
}

std::string NewUlid(const Clock& clock, Random& random) {
  return EncodeUlid({.ms = static_cast<uint64_t>(ToUnixMillis(clock.Now())),
                     .hi = static_cast<uint16_t>(random.Next()),
                     .lo = random.Next()});
}

bool IsUlid(const std::string& s) { return DecodeUlid(s).has_value(); }

}  // namespace hookrelay
