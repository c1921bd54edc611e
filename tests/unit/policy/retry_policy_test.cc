#include "policy/retry_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>

namespace hookrelay::policy {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

const std::vector<Duration> kTierLadder = {minutes(5), minutes(30), hours(3), hours(18), hours(24)};

Result<RetryPolicy> Parse(std::string_view json) { return ParsePolicy(boost::json::parse(json)); }

RetryPolicy Preset(std::string_view name) {
  Result<RetryPolicy> p = PresetPolicy(name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return *p;
}

TEST(PresetPolicyTest, DefaultIsExponentialWithEqualJitter) {
  RetryPolicy p = Preset("default");
  EXPECT_EQ(p.preset, "default");
  EXPECT_EQ(p.strategy, Strategy::kExponential);
  EXPECT_EQ(p.jitter, Jitter::kEqual);
  EXPECT_TRUE(p.ladder.empty());
  EXPECT_EQ(p.base, minutes(1));
  EXPECT_EQ(p.cap, minutes(30));
  EXPECT_EQ(p.max_attempts, 6);
  EXPECT_EQ(p.max_duration, hours(1));
  EXPECT_EQ(p.timeout, seconds(30));
  EXPECT_EQ(p.replay_window, hours(24 * 30));
  EXPECT_TRUE(p.Validate().ok());
}

struct TierCase {
  const char* name;
  int attempts;
  Duration timeout;
  Duration replay_window;
  Duration max_duration;
};

TEST(PresetPolicyTest, TiersShareTheLadderAndDifferInReach) {
  const TierCase cases[] = {
      {"free", 3, seconds(60), hours(24 * 3), hours(24)},
      {"pro", 5, seconds(120), hours(24 * 30), hours(48)},
      {"scale", 10, seconds(300), hours(24 * 90), hours(24 * 7)},
  };
  for (const TierCase& c : cases) {
    SCOPED_TRACE(c.name);
    RetryPolicy p = Preset(c.name);
    EXPECT_EQ(p.preset, c.name);
    EXPECT_EQ(p.strategy, Strategy::kLadder);
    EXPECT_EQ(p.jitter, Jitter::kNone);
    EXPECT_EQ(p.ladder, kTierLadder);
    EXPECT_EQ(p.cap, hours(24));
    EXPECT_EQ(p.max_attempts, c.attempts);
    EXPECT_EQ(p.timeout, c.timeout);
    EXPECT_EQ(p.replay_window, c.replay_window);
    EXPECT_EQ(p.max_duration, c.max_duration);
    EXPECT_TRUE(p.Validate().ok());
  }
}

TEST(PresetPolicyTest, NamesAreListedAndUnknownNamesListThem) {
  EXPECT_EQ(PresetNames(), (std::vector<std::string>{"default", "free", "pro", "scale"}));
  for (const std::string& name : PresetNames()) EXPECT_TRUE(PresetPolicy(name).ok()) << name;

  Result<RetryPolicy> p = PresetPolicy("enterprise");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(p.status().field(), "preset");
  EXPECT_EQ(p.status().message(),
            "unknown preset \"enterprise\"; valid presets: default, free, pro, scale");
}

TEST(NamesTest, StrategyAndJitter) {
  EXPECT_EQ(StrategyName(Strategy::kLadder), "ladder");
  EXPECT_EQ(StrategyName(Strategy::kExponential), "exponential");
  EXPECT_EQ(JitterName(Jitter::kNone), "none");
  EXPECT_EQ(JitterName(Jitter::kFull), "full");
  EXPECT_EQ(JitterName(Jitter::kEqual), "equal");
  EXPECT_EQ(JitterName(Jitter::kDecorrelated), "decorrelated");
}

TEST(ParsePolicyTest, StringIsAPresetName) {
  Result<RetryPolicy> p = Parse(R"("pro")");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, Preset("pro"));

  Result<RetryPolicy> bad = Parse(R"("platinum")");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "preset");
  EXPECT_THAT(bad.status().message(), HasSubstr("default, free, pro, scale"));
}

TEST(ParsePolicyTest, EmptyObjectIsTheDefaultPolicyWithoutALabel) {
  Result<RetryPolicy> p = Parse("{}");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  RetryPolicy expected = Preset("default");
  expected.preset = "";
  EXPECT_EQ(*p, expected);
}

TEST(ParsePolicyTest, NamedPresetWithoutChangesKeepsItsLabel) {
  Result<RetryPolicy> p = Parse(R"({"preset": "scale"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, Preset("scale"));

  // Restating a preset's own value is not a change.
  p = Parse(R"({"preset": "pro", "max_attempts": 5, "cap": "24h"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->preset, "pro");
}

TEST(ParsePolicyTest, OverridesStartFromThePresetAndMakeItCustom) {
  Result<RetryPolicy> p = Parse(R"({"preset": "pro", "max_attempts": 7, "timeout": "45s"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  RetryPolicy expected = Preset("pro");
  expected.preset = "";
  expected.max_attempts = 7;
  expected.timeout = seconds(45);
  EXPECT_EQ(*p, expected);
}

TEST(ParsePolicyTest, OverridesStartFromDefaultWithoutPreset) {
  Result<RetryPolicy> p = Parse(R"({"base": "1s", "cap": "60s", "jitter": "full"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  RetryPolicy expected = Preset("default");
  expected.preset = "";
  expected.base = seconds(1);
  expected.cap = seconds(60);
  expected.jitter = Jitter::kFull;
  EXPECT_EQ(*p, expected);
}

TEST(ParsePolicyTest, EveryField) {
  Result<RetryPolicy> p = Parse(R"({
    "strategy": "ladder", "jitter": "equal", "delays": ["1s", "250ms", "1m30s"],
    "base": "2s", "cap": "90s", "max_attempts": 1000, "max_duration": "0s",
    "timeout": "5s", "replay_window": "7d"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->preset, "");
  EXPECT_EQ(p->strategy, Strategy::kLadder);
  EXPECT_EQ(p->jitter, Jitter::kEqual);
  EXPECT_EQ(p->ladder, (std::vector<Duration>{seconds(1), milliseconds(250), seconds(90)}));
  EXPECT_EQ(p->base, seconds(2));
  EXPECT_EQ(p->cap, seconds(90));
  EXPECT_EQ(p->max_attempts, kMaxAttemptsLimit);
  EXPECT_EQ(p->max_duration, Duration::zero());
  EXPECT_EQ(p->timeout, seconds(5));
  EXPECT_EQ(p->replay_window, hours(24 * 7));
}

TEST(ParsePolicyTest, SwitchingALadderPresetToExponentialDropsItsSteps) {
  Result<RetryPolicy> p = Parse(R"({"preset": "pro", "strategy": "exponential"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->strategy, Strategy::kExponential);
  EXPECT_TRUE(p->ladder.empty());
  EXPECT_EQ(p->max_attempts, 5);
}

struct ErrorCase {
  const char* json;
  const char* field;
  const char* message;  // exact, or a substring when `substring` is set
  bool substring = false;
};

class ParsePolicyErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParsePolicyErrorTest, NamesTheField) {
  const ErrorCase& c = GetParam();
  Result<RetryPolicy> p = Parse(c.json);
  ASSERT_FALSE(p.ok()) << c.json;
  EXPECT_EQ(p.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(p.status().field(), c.field) << c.json;
  if (c.substring) {
    EXPECT_THAT(p.status().message(), HasSubstr(c.message)) << c.json;
  } else {
    EXPECT_EQ(p.status().message(), c.message) << c.json;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ParsePolicyErrorTest,
    ::testing::Values(
        ErrorCase{R"({"cap": "30s"})", "cap", "must be greater than or equal to base (1m)"},
        ErrorCase{R"({"base": "2h"})", "cap", "must be greater than or equal to base (2h)"},
        ErrorCase{R"({"base": "0s"})", "base", "must be greater than 0"},
        ErrorCase{R"({"timeout": "0s"})", "timeout", "must be greater than 0"},
        ErrorCase{R"({"max_attempts": 0})", "max_attempts", "must be between 1 and 1000"},
        ErrorCase{R"({"max_attempts": -3})", "max_attempts", "must be between 1 and 1000"},
        ErrorCase{R"({"max_attempts": 1001})", "max_attempts", "must be between 1 and 1000"},
        ErrorCase{R"({"max_attempts": 18446744073709551615})", "max_attempts",
                  "must be between 1 and 1000"},
        ErrorCase{R"({"max_attempts": 2.5})", "max_attempts", "must be an integer"},
        ErrorCase{R"({"max_attempts": "5"})", "max_attempts", "must be an integer"},
        ErrorCase{R"({"jitter": "some"})", "jitter",
                  "unknown jitter \"some\"; valid values: none, full, equal, decorrelated"},
        ErrorCase{R"({"jitter": 1})", "jitter", "must be a string"},
        ErrorCase{R"({"strategy": "linear"})", "strategy",
                  "unknown strategy \"linear\"; valid values: ladder, exponential"},
        ErrorCase{R"({"preset": "gold"})", "preset",
                  "unknown preset \"gold\"; valid presets: default, free, pro, scale"},
        ErrorCase{R"({"preset": null})", "preset", "must be a string"},
        ErrorCase{R"({"strategy": "ladder", "delays": ["5m", "30m", "soon"]})", "delays[2]",
                  "invalid duration \"soon\"", true},
        ErrorCase{R"({"strategy": "ladder", "delays": ["5m", 30]})", "delays[1]",
                  "must be a duration string such as \"30s\""},
        ErrorCase{R"({"strategy": "ladder", "delays": ["5m", "0s"]})", "delays[1]",
                  "must be greater than 0"},
        ErrorCase{R"({"strategy": "ladder", "delays": []})", "delays",
                  "must not be empty for the ladder strategy"},
        ErrorCase{R"({"strategy": "ladder"})", "delays",
                  "must not be empty for the ladder strategy"},
        ErrorCase{R"({"strategy": "ladder", "delays": "5m"})", "delays", "must be an array", true},
        ErrorCase{R"({"delays": ["5m"]})", "delays", "only used by the ladder strategy", true},
        ErrorCase{R"({"preset": "pro", "jitter": "decorrelated"})", "jitter",
                  "decorrelated jitter needs the exponential strategy", true},
        ErrorCase{R"({"base": "5"})", "base", "has no unit", true},
        ErrorCase{R"({"cap": "1y"})", "cap", "unknown unit \"y\"", true},
        ErrorCase{R"({"max_duration": "-1h"})", "max_duration", "invalid duration", true},
        ErrorCase{R"({"replay_window": 30})", "replay_window",
                  "must be a duration string such as \"30s\""},
        ErrorCase{R"({"timeout": null})", "timeout", "must be a duration string", true},
        ErrorCase{R"({"foo": 1})", "foo",
                  "unknown field \"foo\" (known fields: preset, strategy, jitter, delays, "
                  "max_attempts, base, cap, max_duration, timeout, replay_window)"},
        ErrorCase{R"({"preset": "pro", "max_attempt": 3})", "max_attempt",
                  "unknown field \"max_attempt\" (known fields: preset, strategy, jitter, delays, "
                  "max_attempts, base, cap, max_duration, timeout, replay_window)"},
        ErrorCase{"42", "", "must be a preset name or an object"},
        ErrorCase{"[\"pro\"]", "", "must be a preset name or an object"},
        ErrorCase{"null", "", "must be a preset name or an object"}));

TEST(ValidateTest, PresetsAndDefaultsAreValid) {
  EXPECT_TRUE(RetryPolicy{}.Validate().ok());
  for (const std::string& name : PresetNames()) EXPECT_TRUE(Preset(name).Validate().ok()) << name;
}

TEST(ValidateTest, ChecksTheSameInvariantsOnAStruct) {
  struct Case {
    const char* field;
    void (*mutate)(RetryPolicy&);
  };
  const Case cases[] = {
      {"cap", [](RetryPolicy& p) { p.cap = p.base - milliseconds(1); }},
      {"base", [](RetryPolicy& p) { p.base = Duration::zero(); }},
      {"base", [](RetryPolicy& p) { p.base = -seconds(1); }},
      {"max_attempts", [](RetryPolicy& p) { p.max_attempts = 0; }},
      {"max_attempts", [](RetryPolicy& p) { p.max_attempts = kMaxAttemptsLimit + 1; }},
      {"max_duration", [](RetryPolicy& p) { p.max_duration = -seconds(1); }},
      {"timeout", [](RetryPolicy& p) { p.timeout = Duration::zero(); }},
      {"replay_window", [](RetryPolicy& p) { p.replay_window = -hours(1); }},
      {"delays", [](RetryPolicy& p) { p.strategy = Strategy::kLadder; }},
      {"delays", [](RetryPolicy& p) { p.ladder = {minutes(1)}; }},
      {"delays[1]",
       [](RetryPolicy& p) {
         p.strategy = Strategy::kLadder;
         p.ladder = {minutes(1), -minutes(1)};
       }},
      {"jitter",
       [](RetryPolicy& p) {
         p.strategy = Strategy::kLadder;
         p.ladder = {minutes(1)};
         p.jitter = Jitter::kDecorrelated;
       }},
  };
  for (const Case& c : cases) {
    RetryPolicy p;
    c.mutate(p);
    Status s = p.Validate();
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << c.field;
    EXPECT_EQ(s.field(), c.field);
  }
}

TEST(ValidateTest, EdgesThatAreAllowed) {
  RetryPolicy p;
  p.cap = p.base;  // a constant delay
  p.max_attempts = 1;
  p.max_duration = Duration::zero();  // no deadline
  p.replay_window = Duration::zero();
  EXPECT_TRUE(p.Validate().ok());
  p.max_attempts = kMaxAttemptsLimit;
  EXPECT_TRUE(p.Validate().ok());
  p.jitter = Jitter::kDecorrelated;
  EXPECT_TRUE(p.Validate().ok());
}

TEST(PolicyToJsonTest, CanonicalForm) {
  boost::json::object o = PolicyToJson(Preset("pro"));
  EXPECT_EQ(boost::json::value(o), boost::json::parse(R"({
    "preset": "pro", "strategy": "ladder", "jitter": "none",
    "delays": ["5m", "30m", "3h", "18h", "1d"], "base": "1m", "cap": "1d",
    "max_attempts": 5, "max_duration": "2d", "timeout": "2m", "replay_window": "30d"})"));

  RetryPolicy custom = Preset("default");
  custom.preset = "";
  o = PolicyToJson(custom);
  EXPECT_FALSE(o.contains("preset"));
  EXPECT_EQ(o.at("delays"), boost::json::array());
}

TEST(PolicyToJsonTest, RoundTrips) {
  std::vector<RetryPolicy> policies;
  for (const std::string& name : PresetNames()) policies.push_back(Preset(name));
  policies.push_back(RetryPolicy{});
  RetryPolicy odd;
  odd.jitter = Jitter::kDecorrelated;
  odd.base = milliseconds(1);
  odd.cap = milliseconds(90061001);  // 1d1h1m1s1ms
  odd.max_attempts = kMaxAttemptsLimit;
  odd.max_duration = Duration::zero();
  odd.timeout = milliseconds(250);
  odd.replay_window = Duration::zero();
  policies.push_back(odd);
  RetryPolicy ladder = Preset("scale");
  ladder.preset = "";
  ladder.jitter = Jitter::kFull;
  ladder.ladder = {seconds(1), milliseconds(1500), hours(48)};
  policies.push_back(ladder);

  for (const RetryPolicy& p : policies) {
    ASSERT_TRUE(p.Validate().ok());
    boost::json::value json = PolicyToJson(p);
    Result<RetryPolicy> back = ParsePolicy(json);
    ASSERT_TRUE(back.ok()) << boost::json::serialize(json) << ": " << back.status().ToString();
    EXPECT_EQ(*back, p) << boost::json::serialize(json);
    // And through text, as it is stored.
    back = ParsePolicy(boost::json::parse(boost::json::serialize(json)));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
  }
}

// Issue 10.6: a custom ladder stated without "jitter" must not inherit the default preset's
// equal jitter ({"strategy":"ladder","delays":["2s"]} retried after about 1 s), nor its 30m cap.
TEST(ParsePolicyTest, CustomLadderDefaultsToNoJitter) {
  Result<RetryPolicy> p = Parse(R"({"strategy": "ladder", "delays": ["2s"]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->jitter, Jitter::kNone);
  EXPECT_EQ(p->ladder, std::vector<Duration>{seconds(2)});
  EXPECT_EQ(p->cap, hours(24));

  // A ladder with a step past 24h is not cut down to it.
  p = Parse(R"({"strategy": "ladder", "delays": ["1h", "2d"]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->cap, hours(48));

  // What is stated wins.
  p = Parse(R"({"strategy": "ladder", "delays": ["2s"], "jitter": "full", "cap": "1s"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->jitter, Jitter::kFull);
  EXPECT_EQ(p->cap, seconds(1));

  // Not held to base (unused by a ladder), but never 0.
  p = Parse(R"({"strategy": "ladder", "delays": ["2s"], "cap": "0s"})");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().field(), "cap");

  // A named preset is the starting point, as documented: its fields are inherited.
  p = Parse(R"({"preset": "default", "strategy": "ladder", "delays": ["2s"]})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->jitter, Jitter::kEqual);

  // The exponential strategy keeps the default's equal jitter.
  p = Parse(R"({"strategy": "exponential", "base": "1s", "cap": "1m"})");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->jitter, Jitter::kEqual);
}

}  // namespace
}  // namespace hookrelay::policy
