#include "store/event_id.h"

namespace hookrelay::store {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr uint64_t kSequenceMask = (uint64_t{1} << kEventKeySequenceBits) - 1;

int Digit(char c) {
  for (int i = 0; i < 32; ++i) {
    if (kAlphabet[i] == c) return i;
  }
  return -1;
}

// Five bits at `shift` (0..75) of the 80-bit number hi:lo (hi holds the top 16 bits).
uint64_t FiveBits(uint64_t hi, uint64_t lo, int shift) {
  if (shift >= 64) return (hi >> (shift - 64)) & 31;
  if (shift + 5 <= 64) return (lo >> shift) & 31;
  return ((lo >> shift) | (hi << (64 - shift))) & 31;
}

}  // namespace

int64_t EventKeyFloor(TimePoint t) {
  const int64_t ms = ToUnixMillis(t);
  return ms <= 0 ? 0 : ms << kEventKeySequenceBits;
}

TimePoint EventKeyTime(int64_t key) { return FromUnixMillis(key >> kEventKeySequenceBits); }

std::string EventIdFromKey(int64_t key, uint64_t store_bits) {
  uint64_t ms = static_cast<uint64_t>(key) >> kEventKeySequenceBits;
  const uint64_t seq = static_cast<uint64_t>(key) & kSequenceMask;
  std::string out(26, '0');
  for (int i = 9; i >= 0; --i) {  // 48-bit time → 10 characters (50 bits, top 2 zero)
    out[i] = kAlphabet[ms & 31];
    ms >>= 5;
  }
  // The last 16 characters: 80 bits = 4 zero bits, the store's 64 bits, the 12-bit sequence.
  const uint64_t hi = store_bits >> (64 - kEventKeySequenceBits);
  const uint64_t lo = (store_bits << kEventKeySequenceBits) | seq;
  for (int i = 25; i >= 10; --i) out[i] = kAlphabet[FiveBits(hi, lo, 5 * (25 - i))];
  return out;
}

std::optional<int64_t> EventKeyFromId(std::string_view id, uint64_t store_bits) {
  if (id.size() != 26) return std::nullopt;
  uint64_t ms = 0;
  for (int i = 0; i < 10; ++i) {
    const int d = Digit(id[i]);
    if (d < 0) return std::nullopt;
    ms = (ms << 5) | static_cast<uint64_t>(d);
  }
  if (ms >> 48) return std::nullopt;
  uint64_t hi = 0;  // the top 16 bits of the last 80
  uint64_t lo = 0;
  for (int i = 10; i < 26; ++i) {
    const int d = Digit(id[i]);
    if (d < 0) return std::nullopt;
    hi = (hi << 5) | (lo >> 59);
    lo = (lo << 5) | static_cast<uint64_t>(d);
  }
  if (hi >> (80 - 64 - 4)) return std::nullopt;  // the 4 bits above the store's must be zero
  const uint64_t bits = (hi << (64 - kEventKeySequenceBits)) | (lo >> kEventKeySequenceBits);
  if (bits != store_bits) return std::nullopt;  // another store's id, or a made-up one
  return static_cast<int64_t>((ms << kEventKeySequenceBits) | (lo & kSequenceMask));
}

}  // namespace hookrelay::store
