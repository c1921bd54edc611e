// Black-box tests of `hookrelay schedule`: the real binary, its stdout, stderr and exit code.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <regex>

#include "support/process.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
using testing::RunProgram;
using testing::RunResult;

RunResult Schedule(std::vector<std::string> args) {
  args.insert(args.begin(), {HOOKRELAY_BINARY, "schedule"});
  return RunProgram(args);
}

json::object ScheduleJson(std::vector<std::string> args) {
  args.push_back("--json");
  RunResult r = Schedule(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out).as_object();
}

TEST(ScheduleCliTest, ProPresetShowsTheLadder) {
  RunResult r = Schedule({"--policy", "pro"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* at : {"+0s", "+5m\n", "+35m\n", "+3h35m\n", "+21h35m\n"}) {
    EXPECT_NE(r.out.find(at), std::string::npos) << "missing " << at << " in\n" << r.out;
  }
  EXPECT_EQ(r.out.find("+1d"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Gives up"), std::string::npos);
  EXPECT_NE(r.out.find("5 attempts"), std::string::npos);
}

TEST(ScheduleCliTest, PresetsJsonAttemptCounts) {
  struct Case {
    const char* name;
    size_t attempts;
    int64_t last_at_s;
  };
  const int64_t h = 3600;
  for (const Case& c : {Case{"free", 3, 35 * 60}, Case{"pro", 5, 21 * h + 35 * 60},
                        Case{"scale", 10, 21 * h + 35 * 60 + 5 * 24 * h}}) {
    json::object doc = ScheduleJson({"--policy", c.name});
    const json::array& attempts = doc.at("attempts").as_array();
    ASSERT_EQ(attempts.size(), c.attempts) << c.name;
    EXPECT_EQ(attempts[0].at("n").as_int64(), 1);
    EXPECT_EQ(attempts[0].at("at_s").as_int64(), 0);
    EXPECT_EQ(attempts.back().at("at_s").as_int64(), c.last_at_s) << c.name;
    // at_s is the running sum of delay_s.
    int64_t sum = 0;
    for (const auto& a : attempts) {
      sum += a.at("delay_s").as_int64();
      EXPECT_EQ(a.at("at_s").as_int64(), sum) << c.name;
    }
    EXPECT_EQ(doc.at("gives_up").at("after_s").as_int64(), c.last_at_s);
    EXPECT_FALSE(doc.at("gives_up").at("reason").as_string().empty());
    EXPECT_EQ(doc.at("policy").at("preset").as_string(), c.name);
  }
}

TEST(ScheduleCliTest, DefaultPresetIsJitteredAndSeedable) {
  json::object a = ScheduleJson({"--policy", "default", "--seed", "1"});
  json::object b = ScheduleJson({"--policy", "default", "--seed", "1"});
  json::object c = ScheduleJson({"--policy", "default", "--seed", "2"});
  EXPECT_EQ(json::serialize(a), json::serialize(b));
  EXPECT_NE(json::serialize(a.at("attempts")), json::serialize(c.at("attempts")));
  const json::array& attempts = a.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 6u);
  // Equal jitter on base 1m: retry k waits within [d/2, d], d = min(30m, 1m * 2^(k-1)).
  for (size_t k = 1; k < attempts.size(); ++k) {
    double d = std::min(1800.0, 60.0 * (1 << (k - 1)));
    double delay = attempts[k].at("delay_s").to_number<double>();
    EXPECT_GE(delay, d / 2) << k;
    EXPECT_LE(delay, d) << k;
  }
}

// Jittered delays are rounded for the table ("1m47s", not "1m46s692ms"), so every row keeps its
// columns; --json keeps the exact values, as plain numbers (never "1.5E0").
TEST(ScheduleCliTest, JitteredDelaysAreRoundedInTheTable) {
  RunResult r = Schedule({"--policy", "default", "--seed", "7"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t rows = 0;
  size_t start = r.out.find("  attempt");
  ASSERT_NE(start, std::string::npos) << r.out;
  for (size_t at = r.out.find('\n', start) + 1; at < r.out.size() && r.out[at] != '\n';) {
    size_t end = r.out.find('\n', at);
    std::string line = r.out.substr(at, end - at);
    EXPECT_EQ(line.find("ms"), std::string::npos) << line;  // no 1m46s692ms
    EXPECT_EQ(line.find('+'), 22u) << "columns broken: " << line;
    ++rows;
    at = end + 1;
  }
  EXPECT_GT(rows, 3u);
  RunResult j =
      Schedule({"--policy-json",
                R"({"strategy":"exponential","jitter":"none","base":"1500ms","cap":"10s",)"
                R"("max_attempts":3})",
                "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"delay_s\":1.5,"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find("E0"), std::string::npos) << j.out;
}

// Issue 12.8: short jittered delays are rounded too ("1.7s", not "1s719ms"), and a decimal
// duration says what to write instead.
TEST(ScheduleCliTest, ShortJitteredDelaysAreRoundedAndDecimalsExplained) {
  RunResult r =
      Schedule({"--policy-json", R"({"strategy":"ladder","delays":["2s"],"jitter":"equal"})",
                "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t start = r.out.find("  attempt");
  ASSERT_NE(start, std::string::npos) << r.out;
  const std::string table = r.out.substr(start);
  EXPECT_EQ(table.find("ms"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(Gives up at \+[0-9]+(\.[0-9])?s:)"))) << table;
  RunResult bad = Schedule({"--policy-json", R"({"base":"1.5s"})"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.find("no unit"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("whole numbers only: use \"1500ms\""), std::string::npos) << bad.err;
}

TEST(ScheduleCliTest, CustomPolicyJson) {
  json::object doc = ScheduleJson(
      {"--policy-json",
       R"({"strategy":"exponential","jitter":"none","base":"1s","cap":"10s","max_attempts":6,"max_duration":"1h"})"});
  const json::array& attempts = doc.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 6u);
  std::vector<int64_t> delays;
  for (const auto& a : attempts) delays.push_back(a.at("delay_s").as_int64());
  EXPECT_EQ(delays, (std::vector<int64_t>{0, 1, 2, 4, 8, 10}));  // capped at 10s
}

TEST(ScheduleCliTest, DeadlineStopsTheSchedule) {
  json::object doc = ScheduleJson(
      {"--policy-json",
       R"({"strategy":"exponential","jitter":"none","base":"1m","cap":"1h","max_attempts":20,"max_duration":"10m"})"});
  // 0, +1m, +3m, +7m; the next would be +15m, past the 10m deadline.
  EXPECT_EQ(doc.at("attempts").as_array().size(), 4u);
  EXPECT_EQ(doc.at("gives_up").at("kind").as_string(), "give_up_deadline");
}

TEST(ScheduleCliTest, BadInputNamesTheField) {
  struct Case {
    std::vector<std::string> args;
    const char* field;
  };
  const std::vector<Case> cases = {
      {{"--policy", "platinum"}, "preset"},
      {{"--policy-json", R"({"base":"1m","cap":"30s"})"}, "cap"},
      {{"--policy-json", R"({"max_attempts":0})"}, "max_attempts"},
      {{"--policy-json", R"({"max_attempts":-3})"}, "max_attempts"},
      {{"--policy-json", R"({"jitter":"wobbly"})"}, "jitter"},
      {{"--policy-json", R"({"base":"soon"})"}, "base"},
      {{"--policy-json", R"({"bogus":1})"}, "bogus"},
      {{"--policy-json", R"({"strategy":"ladder","delays":[]})"}, "delays"},
      {{"--policy-json", "{not json"}, "policy-json"},
  };
  for (const Case& c : cases) {
    RunResult r = Schedule(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args.back();
    EXPECT_NE(r.err.find(c.field), std::string::npos)
        << "stderr should name " << c.field << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(ScheduleCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Schedule({}).exit_code, 2);
  EXPECT_EQ(Schedule({"--policy", "pro", "--policy-json", "{}"}).exit_code, 2);
  EXPECT_EQ(Schedule({"--policy", "pro", "--seed", "abc"}).exit_code, 2);
  // The same seed parser as simulate herd: -1 is refused, not wrapped to 2^64-1.
  RunResult negative = Schedule({"--policy", "pro", "--seed", "-1"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--seed: expected a whole number from 0 to 18446744073709551615"),
            std::string::npos)
      << negative.err;
  EXPECT_EQ(RunProgram({HOOKRELAY_BINARY, "no-such-command"}).exit_code, 2);
  RunResult help = RunProgram({HOOKRELAY_BINARY, "schedule", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--policy-json"), std::string::npos);
}

// Issue 10.6: a custom ladder says no jitter unless it asks for one: {"delays": ["2s"]} retries
// after exactly 2 s (it used to inherit the default preset's equal jitter: about 1-2 s), and
// the effective policy is printed in full.
TEST(ScheduleCliTest, CustomLadderHasNoJitterAndIsShownInFull) {
  const std::string policy = R"({"strategy": "ladder", "delays": ["2s"], "max_attempts": 4})";
  for (int seed = 1; seed <= 5; ++seed) {
    json::object doc = ScheduleJson({"--policy-json", policy, "--seed", std::to_string(seed)});
    const json::array& attempts = doc.at("attempts").as_array();
    ASSERT_EQ(attempts.size(), 4u);
    for (size_t i = 1; i < attempts.size(); ++i) {
      EXPECT_EQ(json::serialize(attempts[i].at("delay_s")), "2") << seed;
    }
    EXPECT_EQ(doc.at("policy").at("jitter").as_string(), "none");
  }
  RunResult r = Schedule({"--policy-json", policy});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"custom: ladder 2s", "jitter none", "cap 1d", "4 attempts",
                           "max duration 1h", "timeout 30s", "replay window 30d"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing " << part << " in\n" << r.out;
  }
}

}  // namespace
}  // namespace hookrelay
