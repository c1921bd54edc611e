#include "app/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "common/time_format.h"
#include "http/json_text.h"

namespace hookrelay::app {

namespace {

constexpr const char* kLoggerName = "hookrelay";

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
  }
  return spdlog::level::info;
}

LogLevel FromSpdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return LogLevel::kTrace;
    case spdlog::level::debug: return LogLevel::kDebug;
    case spdlog::level::info: return LogLevel::kInfo;
    case spdlog::level::warn: return LogLevel::kWarn;
    default:  // err, critical
      return LogLevel::kError;
  }
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string line = FormatJsonLogRecord(
        msg.time, FromSpdlog(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view text) {
  if (text == "trace") return LogLevel::kTrace;
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarn;
  if (text == "error") return LogLevel::kError;
  return Status::InvalidArgument("must be one of trace, debug, info, warn, error (got \"" +
                                 http::ValidUtf8(text) + "\")");
}

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return Status::InvalidArgument("must be text or json (got \"" + http::ValidUtf8(text) + "\")");
}

std::string_view LogLevelName(LogLevel level) {
  const auto& name = spdlog::level::to_string_view(ToSpdlog(level));
  return std::string_view(name.data(), name.size());
}

std::string FormatJsonLogRecord(std::chrono::system_clock::time_point time, LogLevel level,
                                std::string_view message) {
  std::string line =
      "{\"time\":\"" + FormatRfc3339(std::chrono::floor<Duration>(time)) + "\",\"level\":\"";
  line += LogLevelName(level);
  line += "\",\"message\":";
  line += boost::json::serialize(boost::json::string(http::ValidUtf8(message)));
  line += "}";
  return line;
}

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonFormatter>();
  return std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                                                     spdlog::pattern_time_type::utc);
}

void ConfigureLogging(const LogSettings& settings) {
  std::shared_ptr<spdlog::logger> logger = spdlog::get(kLoggerName);
  if (!logger) {
    logger = spdlog::stderr_logger_mt(kLoggerName);
    spdlog::set_default_logger(logger);
  }
  logger->set_formatter(MakeLogFormatter(settings.format));
  logger->set_level(ToSpdlog(settings.level));
  // stderr is unbuffered; flushing every record keeps lines whole and in order when the
  // process is killed.
  logger->flush_on(spdlog::level::trace);
}

}  // namespace hookrelay::app
