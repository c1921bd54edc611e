#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace spdlog {
class formatter;
}

namespace hookrelay::app {

// How `hookrelay serve` logs: to stderr, one line per record, from `level` up. stdout is kept for
// what a person starting the server reads (the address, the admin token).
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };
enum class LogFormat {
  kText,  // "2026-12-01T20:10:34.123Z info message"
  kJson,  // {"time":"2026-12-01T20:10:34.123Z","level":"info","message":"…"}
};

struct LogSettings {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;
  bool operator==(const LogSettings&) const = default;
};

// "trace", "debug", "info", "warn" (or "warning"), "error"; anything else is InvalidArgument
// listing the accepted values (field empty: the caller names it).
Result<LogLevel> ParseLogLevel(std::string_view text);
// "text" or "json"; anything else is InvalidArgument listing them.
Result<LogFormat> ParseLogFormat(std::string_view text);
std::string_view LogLevelName(LogLevel level);  // as written in the log: "info", "warning", …

// One JSON log record (without the newline): an object with "time" (UTC, RFC 3339 with
// milliseconds), "level" and "message". The message is escaped as JSON requires (quotes,
// backslashes, control characters); bytes that are not valid UTF-8 are repaired as
// http::ValidUtf8 does, so every line parses. Pure.
std::string FormatJsonLogRecord(std::chrono::system_clock::time_point time, LogLevel level,
                                std::string_view message);

// The spdlog formatter of `format` (each record ends with "\n").
std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format);

// Makes the process' default spdlog logger write to stderr with `settings`; may be called again
// to change them (start-up sets defaults before the config file is read; a config reload sets
// the file's new ones). Safe while other threads log once the logger exists: a second call only
// changes the level (atomic) and the formatter (under the sink's lock).
void ConfigureLogging(const LogSettings& settings);

}  // namespace hookrelay::app
