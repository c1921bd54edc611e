#pragma once

#include <string>

#include "common/clock.h"
#include "common/random.h"

namespace hookrelay {

// A ULID: 26 Crockford base32 characters, 48 bits of milliseconds then 80 random bits, so ids
// sort by creation time as strings. Used for event ids (the `webhook-id` header).
std::string NewUlid(const Clock& clock, Random& random);

// True when `s` has the shape of a ULID (26 characters of Crockford base32, first ≤ '7').
bool IsUlid(const std::string& s);

}  // namespace hookrelay
