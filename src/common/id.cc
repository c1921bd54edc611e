#include "common/id.h"

#include <cstring>

namespace hookrelay {
namespace {
constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
}

std::string NewUlid(const Clock& clock, Random& random) {
  uint64_t ms = static_cast<uint64_t>(ToUnixMillis(clock.Now())) & ((1ULL << 48) - 1);
  uint64_t hi = random.Next() & ((1ULL << 16) - 1);  // 16 bits
  uint64_t lo = random.Next();                       // 64 bits
  std::string out(26, '0');
  // 48-bit time → 10 characters (50 bits, top 2 zero).
  for (int i = 9; i >= 0; --i) {
    out[i] = kAlphabet[ms & 31];
    ms >>= 5;
  }
  // 80 random bits → 16 characters.
  for (int i = 25; i >= 10; --i) {
    out[i] = kAlphabet[lo & 31];
    lo = (lo >> 5) | ((hi & 31) << 59);
    hi >>= 5;
  }
  return out;
}

bool IsUlid(const std::string& s) {
  if (s.size() != 26 || s[0] > '7') return false;
  for (char c : s) {
    if (!std::strchr(kAlphabet, c) || c == '\0') return false;
  }
  return true;
}

}  // namespace hookrelay
