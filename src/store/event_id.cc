#include "store/event_id.h"

#include "common/id.h"

namespace hookrelay::store {
namespace {

constexpr uint64_t kSequenceMask = (uint64_t{1} << kEventKeySequenceBits) - 1;
// The ULID's 80 bits after the time: 4 zero bits, the store's 64 bits, the 12-bit sequence. `hi`
// holds the top 16 of them, so the store's top 12 bits.
constexpr int kStoreBitsInHi = 16 - 4;

}  // namespace

int64_t EventKeyFloor(TimePoint t) {
  const int64_t ms = ToUnixMillis(t);
  return ms <= 0 ? 0 : ms << kEventKeySequenceBits;
}

TimePoint EventKeyTime(int64_t key) { return FromUnixMillis(key >> kEventKeySequenceBits); }

std::string EventIdFromKey(int64_t key, uint64_t store_bits) {
  const uint64_t k = static_cast<uint64_t>(key);
  return EncodeUlid({.ms = k >> kEventKeySequenceBits,
                     .hi = static_cast<uint16_t>(store_bits >> (64 - kStoreBitsInHi)),
                     .lo = (store_bits << kEventKeySequenceBits) | (k & kSequenceMask)});
}

std::optional<int64_t> EventKeyFromId(std::string_view id, uint64_t store_bits) {
  const std::optional<UlidBits> bits = DecodeUlid(id);
  if (!bits) return std::nullopt;
  if (bits->hi >> kStoreBitsInHi) return std::nullopt;  // the 4 bits above the store's are zero
  const uint64_t store =
      (uint64_t{bits->hi} << (64 - kStoreBitsInHi)) | (bits->lo >> kEventKeySequenceBits);
  if (store != store_bits) return std::nullopt;  // another store's id, or a made-up one
  return static_cast<int64_t>((bits->ms << kEventKeySequenceBits) | (bits->lo & kSequenceMask));
}

}  // namespace hookrelay::store
