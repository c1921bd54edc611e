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
// moves a key later than its millisecond: keys stay unique and time-ordered. The event's stored
// received_at is the key's millisecond (EventKeyTime), so a time range is exactly a key range. The
// key is the row's primary key (the rowid in SQLite): no index exists only to map an id or a
// receive time to a row.
inline constexpr int kEventKeySequenceBits = 12;

// The smallest key of an event received at or after `t` (for since/until and retention cutoffs).
int64_t EventKeyFloor(TimePoint t);
// The receive time a key stands for (its millisecond): the event's received_at.
TimePoint EventKeyTime(int64_t key);

// The API's event id: a ULID-shaped string (26 Crockford base32 characters, 128 bits: 48 bits of
// milliseconds, then 68 bits that carry `store_bits`, then the 12-bit sequence), derived from the
// key. `store_bits` are 64 random bits each store chooses once, when its database is created (the
// 4 high bits of the 68 are zero): two relays receiving an event in the same millisecond give it
// different ids (and so different webhook-ids). Within a store ids sort as their keys do. Also the
// `webhook-id` of every request.
std::string EventIdFromKey(int64_t key, uint64_t store_bits);
// The key of an id EventIdFromKey made with the same `store_bits`; nullopt for any other string
// (not an id of this store: another store's id, a made-up one, lower case, a ULID).
std::optional<int64_t> EventKeyFromId(std::string_view id, uint64_t store_bits);

}  // namespace hookrelay::store
