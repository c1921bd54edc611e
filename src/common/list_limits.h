#pragma once

// Page sizes of the management API's lists, shared by the API (the `limit` query parameter),
// the stores (which clamp to the maximum) and the CLI (`--limit`), so all three agree.
namespace hookrelay {

inline constexpr int kDefaultListLimit = 100;  // items per page when `limit` is not given
inline constexpr int kMaxListLimit = 1000;     // the largest `limit` accepted

}  // namespace hookrelay
