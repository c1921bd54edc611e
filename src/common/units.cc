#include "common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

namespace hookrelay {
namespace {

// Reads leading decimal digits into `value`; returns how many characters were read (0 if none
// or on overflow, with `overflow` set).
size_t ReadUnsigned(std::string_view s, uint64_t& value, bool& overflow) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + i, value);
  overflow = ec == std::errc::result_out_of_range;
  return overflow ? 0 : i;
}

// Milliseconds per duration unit; 0 when `unit` is not one.
int64_t UnitScale(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return 86'400'000;
  return 0;
}

// `ms` in the largest unit it is a whole number of: 1500 → "1500ms", 135000 → "135s".
std::string InOneUnit(int64_t ms) {
  for (auto [scale, name] : {std::pair<int64_t, const char*>{86'400'000, "d"},
                             {3'600'000, "h"},
                             {60'000, "m"},
                             {1000, "s"}}) {
    if (ms % scale == 0) return std::to_string(ms / scale) + name;
  }
  return std::to_string(ms) + "ms";
}

// For a duration written with a decimal ("1.5s", "1m0.5s"): the same length in whole numbers
// ("1500ms", "1m500ms": each decimal part in the largest unit it is whole in), or "" when it has
// none (no unit, an unknown one, a fraction of a millisecond).
std::string WholeEquivalent(std::string_view text) {
  double total = 0;
  std::string parts;
  while (!text.empty()) {
    size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (i == 0 || i > 18) return "";
    const std::string number(text.substr(0, i));
    if (number.find('.') != number.rfind('.') || number.front() == '.' || number.back() == '.') {
      return "";
    }
    size_t u = i;
    while (u < text.size() && std::isalpha(static_cast<unsigned char>(text[u]))) ++u;
    const int64_t scale = UnitScale(text.substr(i, u - i));
    if (scale == 0) return "";
    const double part = std::strtod(number.c_str(), nullptr) * static_cast<double>(scale);
    const double whole = std::round(part);
    if (std::fabs(whole - part) > 1e-6 || whole > 1e15) return "";
    if (whole > 0) parts += InOneUnit(static_cast<int64_t>(whole));
    total += part;
    text.remove_prefix(u);
  }
  if (total < 1) return "";
  // Parts that keep the order ("1m" + "500ms"), else the whole in one unit.
  if (ParseDuration(parts).ok()) return parts;
  return InOneUnit(static_cast<int64_t>(std::round(total)));
}
}  // namespace

Result<Duration> ParseDuration(std::string_view text) {
  const std::string shown = "\"" + std::string(text) + "\"";
  if (text.empty()) {
    return Status::InvalidArgument(
        "empty duration; expected e.g. \"250ms\", \"5s\", \"5m\", "
        "\"3h\", \"1d\"");
  }
  // Largest total we accept: 100 years, far below int64 milliseconds overflow.
  constexpr int64_t kMaxMs = 100LL * 365 * 24 * 3600 * 1000;
  int64_t total = 0;
  std::string_view rest = text;
  int last_rank = 100;
  while (!rest.empty()) {
    uint64_t n = 0;
    bool overflow = false;
    size_t digits = ReadUnsigned(rest, n, overflow);
    if (digits == 0) {
      if (overflow) return Status::InvalidArgument("duration " + shown + " is too large");
      return Status::InvalidArgument("invalid duration " + shown +
                                     ": expected a whole number followed by ms, s, m, h or d");
    }
    rest.remove_prefix(digits);
    if (!rest.empty() && rest.front() == '.') {
      // "1.5s" has its unit; the decimal is what is refused: say what to write instead.
      const std::string whole = WholeEquivalent(text);
      return Status::InvalidArgument(
          "duration " + shown + ": whole numbers only: " +
          (whole.empty() ? std::string("use a smaller unit, e.g. \"1500ms\" for 1.5s")
                         : "use \"" + whole + "\""));
    }
    size_t unit_len = 0;
    while (unit_len < rest.size() && std::isalpha(static_cast<unsigned char>(rest[unit_len]))) {
      ++unit_len;
    }
    std::string_view unit = rest.substr(0, unit_len);
    rest.remove_prefix(unit_len);
    int64_t scale;
    int rank;
    if (unit == "ms") {
      scale = 1, rank = 0;
    } else if (unit == "s") {
      scale = 1000, rank = 1;
    } else if (unit == "m") {
      scale = 60'000, rank = 2;
    } else if (unit == "h") {
      scale = 3'600'000, rank = 3;
    } else if (unit == "d") {
      scale = 86'400'000, rank = 4;
    } else if (unit.empty()) {
      // "5 sec": name what follows the blanks, it is what the writer meant as the unit.
      size_t blanks = 0;
      while (blanks < rest.size() && rest[blanks] == ' ') ++blanks;
      size_t word = 0;
      while (blanks + word < rest.size() &&
             std::isalpha(static_cast<unsigned char>(rest[blanks + word]))) {
        ++word;
      }
      if (blanks > 0 && word > 0) {
        return Status::InvalidArgument(
            "duration " + shown + " has unknown unit \"" + std::string(rest.substr(blanks, word)) +
            "\" after a space; write the number and a unit together, e.g. \"" + std::to_string(n) +
            "s\" (units: ms, s, m, h, d)");
      }
      return Status::InvalidArgument("duration " + shown +
                                     " has no unit; write e.g. \"30s\" (units: ms, s, m, h, d)");
    } else {
      return Status::InvalidArgument("duration " + shown + " has unknown unit \"" +
                                     std::string(unit) + "\" (units: ms, s, m, h, d)");
    }
    if (rank >= last_rank) {
      return Status::InvalidArgument("duration " + shown +
                                     ": parts must go from largest unit to smallest, each once");
    }
    last_rank = rank;
    if (n > static_cast<uint64_t>(kMaxMs / scale) ||
        total + static_cast<int64_t>(n) * scale > kMaxMs) {
      return Status::InvalidArgument("duration " + shown + " is too large (at most 100 years)");
    }
    total += static_cast<int64_t>(n) * scale;
  }
  return Duration(total);
}

std::string FormatDuration(Duration d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = ms == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -ms;
  }
  struct Unit {
    int64_t scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}};
  for (const Unit& u : kUnits) {
    if (ms >= u.scale) {
      out += std::to_string(ms / u.scale);
      out += u.name;
      ms %= u.scale;
    }
  }
  return out;
}

std::string FormatDurationRounded(Duration d) {
  struct Unit {
    int64_t scale;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}};
  int64_t ms = d.count();
  if (ms < 0) {
    if (ms == std::numeric_limits<int64_t>::min()) return FormatDuration(d);
    return "-" + FormatDurationRounded(Duration(-ms));
  }
  size_t largest = 0;
  while (largest < std::size(kUnits) - 1 && ms < kUnits[largest].scale) ++largest;
  if (largest == std::size(kUnits) - 1 || ms % kUnits[largest].scale == 0) {
    return FormatDuration(d);  // milliseconds, or one unit: exact
  }
  if (kUnits[largest].scale == 1000 && ms < 10'000) {
    // Under ten seconds: tenths of a second ("1.7s", "7.0s"), at most two significant figures.
    const int64_t tenths = (ms + 50) / 100;
    if (tenths >= 100) return "10s";
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "s";
  }
  if (kUnits[largest].scale == 1000 && ms >= 10'000) {
    // Ten seconds and more: whole seconds ("46s", not "46s692ms"); "1m0s" when it carries.
    ms = (ms + 500) / 1000 * 1000;
    return ms >= 60'000 ? "1m0s" : std::to_string(ms / 1000) + "s";
  }
  const int64_t step = kUnits[largest + 1].scale;
  ms = (ms + step / 2) / step * step;
  if (ms % kUnits[largest].scale == 0 || (largest > 0 && ms >= kUnits[largest - 1].scale)) {
    // Rounding carried into a whole unit ("59m59.7s" → "1h0m"): show the two units from there.
    while (largest > 0 && ms >= kUnits[largest - 1].scale) --largest;
  }
  const Unit& big = kUnits[largest];
  const Unit& small = kUnits[largest + 1];
  return std::to_string(ms / big.scale) + big.name + std::to_string(ms % big.scale / small.scale) +
         small.name;
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  const std::string shown = "\"" + std::string(text) + "\"";
  uint64_t n = 0;
  bool overflow = false;
  size_t digits = ReadUnsigned(text, n, overflow);
  if (digits == 0) {
    return Status::InvalidArgument("invalid size " + shown +
                                   ": expected a whole number with B, KiB, MiB, GiB, KB, MB or GB");
  }
  std::string_view unit = text.substr(digits);
  uint64_t scale;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "KiB") {
    scale = 1ULL << 10;
  } else if (unit == "MiB") {
    scale = 1ULL << 20;
  } else if (unit == "GiB") {
    scale = 1ULL << 30;
  } else if (unit == "KB" || unit == "kB") {
    scale = 1000;
  } else if (unit == "MB") {
    scale = 1000 * 1000;
  } else if (unit == "GB") {
    scale = 1000 * 1000 * 1000;
  } else {
    return Status::InvalidArgument("size " + shown + " has unknown unit \"" + std::string(unit) +
                                   "\" (units: B, KiB, MiB, GiB, KB, MB, GB)");
  }
  if (n > (1ULL << 50) / scale) return Status::InvalidArgument("size " + shown + " is too large");
  return n * scale;
}

std::string FormatByteSize(uint64_t bytes) {
  if (bytes != 0 && bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + "GiB";
  if (bytes != 0 && bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes != 0 && bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

Result<double> ParseRate(std::string_view text) {
  auto IsDigit = [](char c) { return c >= '0' && c <= '9'; };
  const std::string shown = "\"" + std::string(text) + "\"";
  // A whole or decimal count ("100", "0.5", "0.00001"; no sign, no exponent), then the unit.
  size_t digits = 0;
  while (digits < text.size() && IsDigit(text[digits])) ++digits;
  size_t end = digits;
  if (digits > 0 && end < text.size() && text[end] == '.') {
    size_t fraction = end + 1;
    while (fraction < text.size() && IsDigit(text[fraction])) ++fraction;
    if (fraction > end + 1) end = fraction;
  }
  const std::string_view per = digits ? text.substr(end) : std::string_view();
  double seconds = 0;
  if (per == "/s") {
    seconds = 1;
  } else if (per == "/m") {
    seconds = 60;
  } else if (per == "/h") {
    seconds = 3600;
  }
  double n = 0;
  if (digits == 0 || seconds == 0 ||
      std::from_chars(text.data(), text.data() + end, n).ptr != text.data() + end) {
    return Status::InvalidArgument("invalid rate " + shown +
                                   ": expected e.g. \"100/s\", \"600/m\", \"5000/h\" or "
                                   "\"0.5/s\"");
  }
  if (n <= 0) return Status::InvalidArgument("rate " + shown + " must be greater than zero");
  if (n > 1'000'000'000) return Status::InvalidArgument("rate " + shown + " is too large");
  return n / seconds;
}

namespace {

// "50/s", "1/m", "5/h" when the rate is whole in one of those units.
std::optional<std::string> WholeRate(double per_second) {
  for (auto [scale, unit] : {std::pair{1.0, "/s"}, {60.0, "/m"}, {3600.0, "/h"}}) {
    const double n = per_second * scale;
    if (n >= 1 && std::fabs(n - std::round(n)) < 1e-9) {
      return std::to_string(static_cast<int64_t>(std::round(n))) + unit;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string FormatRateShort(double per_second) {
  if (auto whole = WholeRate(per_second)) return *whole;
  if (!std::isfinite(per_second)) return "?/s";
  // Three significant figures in the first unit where it is at least 1 ("8.57/m"), else per
  // hour ("0.036/h").
  for (auto [scale, unit] : {std::pair{1.0, "/s"}, {60.0, "/m"}, {3600.0, "/h"}}) {
    const double n = per_second * scale;
    if (n >= 1 || scale == 3600.0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", n);
      return std::string(buf) + unit;
    }
  }
  return FormatRate(per_second);  // not reached: the last unit always answers
}

std::string FormatRate(double per_second) {
  if (auto whole = WholeRate(per_second)) return *whole;
  if (!std::isfinite(per_second)) return "?/s";
  if (per_second == std::trunc(per_second) && std::fabs(per_second) < 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(per_second)) + "/s";
  }
  char buf[400];  // fixed notation of the largest double fits
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, per_second, std::chars_format::fixed);
  if (ec != std::errc()) return std::to_string(per_second) + "/s";
  return std::string(buf, end) + "/s";
}

}  // namespace hookrelay
