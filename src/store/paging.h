#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace hookrelay::store {

// Decimal-id cursors, the paging of the lists ordered by a positive integer id, newest first
// (audit, rejections): a page's next_cursor is the id of its last row, in decimal, and the next
// page holds the rows with a lower id.
std::string EncodeIdCursor(int64_t id);
// The id a cursor from EncodeIdCursor holds; for "" (the first page) INT64_MAX, above every id.
// kInvalidArgument (field "cursor", BadCursor) for any other text: not decimal, not positive,
// out of range, or with anything around the digits.
Result<int64_t> DecodeIdCursor(const std::string& cursor);

}  // namespace hookrelay::store
