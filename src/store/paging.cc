#include "store/paging.h"

#include <charconv>
#include <limits>
#include <system_error>

#include "store/row_codec.h"

namespace hookrelay::store {

std::string EncodeIdCursor(int64_t id) { return std::to_string(id); }

Result<int64_t> DecodeIdCursor(const std::string& cursor) {
  if (cursor.empty()) return std::numeric_limits<int64_t>::max();
  int64_t id = 0;
  const char* end = cursor.data() + cursor.size();
  const std::from_chars_result r = std::from_chars(cursor.data(), end, id);
  if (r.ec != std::errc() || r.ptr != end || id <= 0) return BadCursor();
  return id;
}

}  // namespace hookrelay::store
