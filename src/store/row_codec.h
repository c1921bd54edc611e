#pragma once

// What both stores (sqlite/, postgres/) write and read the same way: the headers' byte layout, the
// breaker state's name, the per-minute bucket of the statistics and the answer to a bad cursor.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "policy/breaker.h"
#include "store/store.h"

namespace hookrelay::store {

// Headers as one blob (bytea on PostgreSQL): for each header, a 4-byte little-endian name length,
// the name, a 4-byte little-endian value length, the value. Compact, byte-exact (names and values
// may hold any byte), and never parsed by SQL.
std::string EncodeHeaders(const std::vector<Header>& headers);
// kInternal when `in` is not such a blob.
Result<std::vector<Header>> DecodeHeaders(std::string_view in);

// An event's route misses as one blob, in the headers' layout: three length-prefixed strings
// (route, destination, reason) each. Empty for none.
std::string EncodeRouteMisses(const std::vector<RouteMiss>& misses);
Result<std::vector<RouteMiss>> DecodeRouteMisses(std::string_view in);

// EventFilter::type as the prefix an event's type must start with (the pattern without its '*')
// or, for an exact name, nullopt.
std::optional<std::string_view> TypePrefix(std::string_view pattern);

// `names` as a JSON array of strings, for SQL that reads a list from one parameter
// (json_each on SQLite, jsonb_array_elements_text on PostgreSQL).
std::string JsonStringArray(const std::vector<std::string>& names);

// policy::BreakerStateName's inverse: nullopt for any other text.
std::optional<policy::BreakerState> ParseBreakerStateName(std::string_view s);

// The minute `t` falls in, as minutes since the Unix epoch (the statistics' bucket).
int64_t UnixMinute(TimePoint t);

// What both stores refuse in AppendRejections before writing anything: keep_per_source < 1, a
// rejection without a source or a reason.
Status CheckRejections(const std::vector<Rejection>& rejections, int keep_per_source);

// Every list's answer to a cursor it did not give out (events, audit, replays): one wording.
Status BadCursor();

}  // namespace hookrelay::store
