#include "store/event_id.h"

namespace hookrelay::store {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

int Digit(char c) {
  for (int i = 0; i < 32; ++i) {
    if (kAlphabet[i] == c) return i;
  }
  return -1;
}

}  // namespace

int64_t EventKeyFloor(TimePoint t) {
  const int64_t ms = ToUnixMillis(t);
  return ms <= 0 ? 0 : ms << kEventKeySequenceBits;
}

std::string EventIdFromKey(int64_t key) {
  uint64_t ms = static_cast<uint64_t>(key) >> kEventKeySequenceBits;
  uint64_t seq = static_cast<uint64_t>(key) & ((1u << kEventKeySequenceBits) - 1);
  std::string out(26, '0');
  for (int i = 9; i >= 0; --i) {  // 48-bit time → 10 characters (50 bits, top 2 zero)
    out[i] = kAlphabet[ms & 31];
    ms >>= 5;
  }
  for (int i = 25; i >= 10 && seq; --i) {  // the sequence in the low bits of the last 16
    out[i] = kAlphabet[seq & 31];
    seq >>= 5;
  }
  return out;
}

std::optional<int64_t> EventKeyFromId(std::string_view id) {
  if (id.size() != 26) return std::nullopt;
  uint64_t ms = 0;
  for (int i = 0; i < 10; ++i) {
    const int d = Digit(id[i]);
    if (d < 0) return std::nullopt;
    ms = (ms << 5) | static_cast<uint64_t>(d);
  }
  if (ms >> 48) return std::nullopt;
  uint64_t seq = 0;
  for (int i = 10; i < 26; ++i) {
    const int d = Digit(id[i]);
    if (d < 0) return std::nullopt;
    if (i < 23 && d != 0) return std::nullopt;  // only the last 15 bits may be set
    seq = (seq << 5) | static_cast<uint64_t>(d);
  }
  if (seq >> kEventKeySequenceBits) return std::nullopt;
  return static_cast<int64_t>((ms << kEventKeySequenceBits) | seq);
}

}  // namespace hookrelay::store
