// Fuzzes the config-value parsers: durations ("1h30m"), byte sizes ("5MiB") and rates ("100/s").
// Invariants: accepted values are in range, and what the formatters print parses back to the same
// value (config and API responses show values through the formatters).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/units.h"

namespace {

using hookrelay::Duration;

void Fail(const char* what, std::string_view input, const std::string& detail) {
  std::fprintf(stderr, "units_fuzzer: %s for input \"%.*s\": %s\n", what,
               static_cast<int>(input.size()), input.data(), detail.c_str());
  std::abort();
}

void CheckDuration(std::string_view text) {
  hookrelay::Result<Duration> d = hookrelay::ParseDuration(text);
  if (!d.ok()) {
    if (d.status().message().empty()) Fail("duration error without message", text, "");
    return;
  }
  constexpr int64_t kMaxMs = 100LL * 365 * 24 * 3600 * 1000;
  if (d->count() < 0 || d->count() > kMaxMs) {
    Fail("duration out of range", text, std::to_string(d->count()));
  }
  const std::string shown = hookrelay::FormatDuration(*d);
  hookrelay::Result<Duration> again = hookrelay::ParseDuration(shown);
  if (!again.ok() || *again != *d) Fail("FormatDuration does not round-trip", text, shown);
}

void CheckByteSize(std::string_view text) {
  hookrelay::Result<uint64_t> n = hookrelay::ParseByteSize(text);
  if (!n.ok()) return;
  if (*n > (1ULL << 50)) Fail("size out of range", text, std::to_string(*n));
  const std::string shown = hookrelay::FormatByteSize(*n);
  hookrelay::Result<uint64_t> again = hookrelay::ParseByteSize(shown);
  if (!again.ok() || *again != *n) Fail("FormatByteSize does not round-trip", text, shown);
}

void CheckRate(std::string_view text) {
  hookrelay::Result<double> r = hookrelay::ParseRate(text);
  if (!r.ok()) return;
  if (!std::isfinite(*r) || *r <= 0) Fail("rate not positive", text, std::to_string(*r));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckDuration(text);
  CheckByteSize(text);
  CheckRate(text);
  return 0;
}
