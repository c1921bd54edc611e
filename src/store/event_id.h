#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace hookrelay::store {

// Events are keyed by a 64-bit integer that the store assigns when it appends one: the
// millisecond it was received shifted left by kEventKeySequenceBits, plus a sequence within that
// millisecond. The store keeps keys strictly increasing (a key is max(last + 1, floor of the
// receive time)), so a clock that steps back, or more than 4,096 events in one millisecond, only
// moves a key later than its millisecond: keys stay unique and time-ordered, and a time range is
// a key range. The key is the row's primary key (the rowid in SQLite): no index exists only to map
// an id or a receive time to a row.
inline constexpr int kEventKeySequenceBits = 12;

// The smallest key of an event received at or after `t` (for since/until and retention cutoffs).
int64_t EventKeyFloor(TimePoint t);

// The API's event id: a ULID-shaped string (26 Crockford base32 characters; 48 bits of
// milliseconds, then 80 bits whose low 12 are the sequence) derived from the key, so ids sort as
// their keys do and read like the ULIDs used before. Also the `webhook-id` of every request.
std::string EventIdFromKey(int64_t key);
// The key of an id EventIdFromKey made; nullopt for any other string (not an id of this store).
std::optional<int64_t> EventKeyFromId(std::string_view id);

}  // namespace hookrelay::store
