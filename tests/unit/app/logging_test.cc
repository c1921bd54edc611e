#include "app/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>

#include "app/config.h"

namespace hookrelay::app {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;

// 2026-12-01T20:10:34.123Z
std::chrono::system_clock::time_point SampleTime() {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(1796155834123));
}

TEST(LogSettingsTest, ParsesEveryLevel) {
  const std::pair<const char*, LogLevel> cases[] = {
      {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug},  {"info", LogLevel::kInfo},
      {"warn", LogLevel::kWarn},   {"warning", LogLevel::kWarn}, {"error", LogLevel::kError}};
  for (const auto& [text, level] : cases) {
    auto parsed = ParseLogLevel(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(*parsed, level) << text;
  }
}

TEST(LogSettingsTest, RefusesUnknownLevelsNamingTheAcceptedOnes) {
  for (const char* bad : {"", "INFO", "verbose", "critical", "info "}) {
    auto parsed = ParseLogLevel(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr("must be one of trace, debug, info, warn, error"));
  }
}

TEST(LogSettingsTest, ParsesFormats) {
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  for (const char* bad : {"", "JSON", "logfmt"}) {
    auto parsed = ParseLogFormat(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("must be text or json"));
  }
}

TEST(JsonLogRecordTest, HasTimeLevelAndMessage) {
  const std::string line = FormatJsonLogRecord(SampleTime(), LogLevel::kWarn, "disk is full");
  EXPECT_EQ(line,
            R"({"time":"2026-12-01T20:10:34.123Z","level":"warning","message":"disk is full"})");
}

TEST(JsonLogRecordTest, EscapesWhatJsonRequires) {
  const std::string message =
      std::string("quote \" backslash \\ newline \n tab \t nul ") + '\0' + " bell \x07 end";
  const std::string line = FormatJsonLogRecord(SampleTime(), LogLevel::kError, message);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  json::value v = json::parse(line);
  EXPECT_EQ(v.at("message").as_string(), message);
  EXPECT_EQ(v.at("level").as_string(), "error");
}

TEST(JsonLogRecordTest, InvalidUtf8StillMakesValidJson) {
  const std::string message = "reason: \xff\xfe caf\xc3\xa9 \xc3";
  const std::string line = FormatJsonLogRecord(SampleTime(), LogLevel::kInfo, message);
  json::error_code ec;
  json::value v = json::parse(line, ec);
  ASSERT_FALSE(ec) << line;
  EXPECT_THAT(std::string(v.at("message").as_string()), HasSubstr("caf\xc3\xa9"));
}

TEST(JsonLogRecordTest, LevelNames) {
  EXPECT_EQ(LogLevelName(LogLevel::kTrace), "trace");
  EXPECT_EQ(LogLevelName(LogLevel::kDebug), "debug");
  EXPECT_EQ(LogLevelName(LogLevel::kInfo), "info");
  EXPECT_EQ(LogLevelName(LogLevel::kWarn), "warning");
  EXPECT_EQ(LogLevelName(LogLevel::kError), "error");
}

// The formatter spdlog uses writes one record per line, the same as FormatJsonLogRecord.
TEST(JsonLogRecordTest, SpdlogFormatterWritesOneJsonLine) {
  auto formatter = MakeLogFormatter(LogFormat::kJson);
  const std::string payload = "hello \"world\"";
  spdlog::details::log_msg msg(SampleTime(), spdlog::source_loc{}, "hookrelay",
                               spdlog::level::debug, payload);
  spdlog::memory_buf_t out;
  formatter->format(msg, out);
  const std::string line(out.data(), out.size());
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.substr(0, line.size() - 1),
            FormatJsonLogRecord(SampleTime(), LogLevel::kDebug, payload));
}

TEST(LogConfigTest, DefaultsAreInfoAndText) {
  auto c = ParseConfig("", "hookrelay.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->log.level, LogLevel::kInfo);
  EXPECT_EQ(c->log.format, LogFormat::kText);
}

TEST(LogConfigTest, ReadsLevelAndFormat) {
  auto c = ParseConfig("[log]\nlevel = \"debug\"\nformat = \"json\"\n", "hookrelay.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->log.level, LogLevel::kDebug);
  EXPECT_EQ(c->log.format, LogFormat::kJson);
}

TEST(LogConfigTest, BadValuesNameFileLineAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"[log]\nlevel = \"loud\"\n",
       "hookrelay.toml:2: log.level: must be one of trace, debug, info, warn, error (got "
       "\"loud\")"},
      {"[log]\n\nformat = \"xml\"\n",
       "hookrelay.toml:3: log.format: must be text or json (got \"xml\")"},
      {"[log]\nlevel = 3\n", "hookrelay.toml:2: log.level: must be a string"},
      {"[log]\ncolour = true\n", "hookrelay.toml:2: log.colour: unknown field"},
      {"log = \"json\"\n", "log: must be a table"},
  };
  for (const auto& [toml, expected] : cases) {
    auto c = ParseConfig(toml, "hookrelay.toml");
    ASSERT_FALSE(c.ok()) << toml;
    EXPECT_THAT(c.status().message(), HasSubstr(expected));
  }
}

}  // namespace
}  // namespace hookrelay::app
