#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/random.h"

namespace hookrelay {

// A ULID: 26 Crockford base32 characters, 48 bits of milliseconds then 80 random bits, so ids
// sort by creation time as strings. Used for event ids (the `webhook-id` header).
std::string NewUlid(const Clock& clock, Random& random);

// The 128 bits of a ULID: 48 bits of milliseconds, then 80 bits (`hi` the top 16, `lo` the low
// 64).
struct UlidBits {
  uint64_t ms = 0;  // < 2^48
  uint16_t hi = 0;
  uint64_t lo = 0;
};
// The 26-character Crockford base32 text of `bits` (ms above 48 bits is cut), and back: nullopt
// unless `text` is 26 characters of the upper-case alphabet with a first character <= '7'.
std::string EncodeUlid(const UlidBits& bits);
std::optional<UlidBits> DecodeUlid(std::string_view text);

// True when `s` has the shape of a ULID (26 characters of Crockford base32, first ≤ '7').
bool IsUlid(const std::string& s);

}  // namespace hookrelay
