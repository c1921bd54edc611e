#include "common/time_format.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace hookrelay {
namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

int MonthIndex(std::string_view m) {
  for (int i = 0; i < 12; ++i) {
    if (m == kMonths[i]) return i;
  }
  return -1;
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm), so the
// conversion does not depend on the process's time zone.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int DaysInMonth(int year, int mon) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return mon == 2 && leap ? 29 : kDays[mon - 1];
}

bool ValidFields(int year, int mon, int day, int h, int mi, int s) {
  return year >= 1970 && year <= 9999 && mon >= 1 && mon <= 12 && day >= 1 &&
         day <= DaysInMonth(year, mon) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 &&
         s <= 60;
}

std::optional<TimePoint> Make(int year, int mon, int day, int h, int mi, int s, int64_t ms) {
  if (!ValidFields(year, mon, day, h, mi, s)) return std::nullopt;
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  int64_t secs = days * 86400 + h * 3600 + mi * 60 + s;
  return FromUnixMillis(secs * 1000 + ms);
}

}  // namespace

std::string FormatRfc3339(TimePoint t, bool with_millis) {
  int64_t ms = ToUnixMillis(t);
  int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  int milli = static_cast<int>(ms - secs * 1000);
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (with_millis) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
  if (text.size() < 20) return std::nullopt;
  std::string s(text);
  int year, mon, day, h, mi, sec, consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &year, &mon, &day, &h, &mi, &sec,
                  &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t ms = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 3) ms = ms * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0) return std::nullopt;
    for (int d = digits; d < 3; ++d) ms *= 10;
  }
  int64_t offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int oh, om;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2 || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_min = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  auto t = Make(year, mon, day, h, mi, sec, ms);
  if (!t) return std::nullopt;
  return *t - Duration(offset_min * 60'000);
}

std::optional<TimePoint> ParseHttpDate(std::string_view text) {
  std::string s(text);
  char wday[16] = {0}, mon[4] = {0}, zone[4] = {0};
  int day, year, h, mi, sec, n = 0;
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  if (std::sscanf(s.c_str(), "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n", wday, &day, mon, &year, &h, &mi,
                  &sec, zone, &n) == 8 &&
      static_cast<size_t>(n) == s.size() && std::strcmp(zone, "GMT") == 0) {
    int m = MonthIndex(mon);
    if (m < 0) return std::nullopt;
    return Make(year, m + 1, day, h, mi, sec, 0);
  }
  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  char wday_long[16] = {0};
  n = 0;
  if (std::sscanf(s.c_str(), "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", wday_long, &day, mon,
                  &year, &h, &mi, &sec, zone, &n) == 8 &&
      static_cast<size_t>(n) == s.size() && std::strcmp(zone, "GMT") == 0) {
    int m = MonthIndex(mon);
    if (m < 0) return std::nullopt;
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    year += year < 70 ? 2000 : 1900;
    return Make(year, m + 1, day, h, mi, sec, 0);
  }
  // asctime: Sun Nov  6 08:49:37 1994
  n = 0;
  if (std::sscanf(s.c_str(), "%3s %3s %d %2d:%2d:%2d %4d%n", wday, mon, &day, &h, &mi, &sec, &year,
                  &n) == 7 &&
      static_cast<size_t>(n) == s.size()) {
    int m = MonthIndex(mon);
    if (m < 0) return std::nullopt;
    return Make(year, m + 1, day, h, mi, sec, 0);
  }
  return std::nullopt;
}

std::string FormatHttpDate(TimePoint t) {
  std::time_t tt = static_cast<std::time_t>(ToUnixMillis(t) / 1000);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

}  // namespace hookrelay
