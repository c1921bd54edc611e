#include "sim/herd_input.h"

#include <gtest/gtest.h>

#include <chrono>

#include "policy/policy_argument.h"

namespace hookrelay::sim {
namespace {

using policy::PolicyArgument;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr auto kPreset = PolicyArgument::Kind::kPreset;
constexpr auto kJson = PolicyArgument::Kind::kJson;

TEST(HerdInputTest, NothingGivenIsTheDefaultScenarioAndTheDefaultSet) {
  auto s = ParseHerdScenario({});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->events, 500);
  EXPECT_EQ(s->fail_window, seconds(60));
  EXPECT_EQ(s->recover_at, minutes(4));
  EXPECT_EQ(s->capacity_per_second, 50);
  EXPECT_EQ(s->seed, 1u);
  auto strategies = ParseHerdStrategies({});
  ASSERT_TRUE(strategies.ok());
  ASSERT_EQ(strategies->size(), DefaultHerdStrategies().size());
  EXPECT_EQ((*strategies)[0].name, "none");
}

TEST(HerdInputTest, ParsesEveryField) {
  HerdInput in;
  in.events = "1200";
  in.fail_window = "1s";
  in.recover_at = "1h30m";
  in.capacity = "3000/m";
  in.seed = "18446744073709551615";
  auto s = ParseHerdScenario(in);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->events, 1200);
  EXPECT_EQ(s->fail_window, seconds(1));
  EXPECT_EQ(s->recover_at, minutes(90));
  EXPECT_EQ(s->capacity_per_second, 50);
  EXPECT_EQ(s->seed, UINT64_MAX);
}

TEST(HerdInputTest, BadValuesNameTheFieldAndLeaveItOutOfTheMessage) {
  struct Case {
    HerdInput in;
    const char* field;
    const char* says;
  };
  auto with = [](auto member, const char* v) {
    HerdInput in;
    in.*member = v;
    return in;
  };
  const std::vector<Case> cases = {
      {with(&HerdInput::events, "lots"), "events", "expected a whole number of events"},
      {with(&HerdInput::events, "-5"), "events", "must be between 1 and"},
      {with(&HerdInput::events, "0"), "events", "must be between 1 and"},
      {with(&HerdInput::events, "99999999999999999999"), "events", "expected a whole number"},
      {with(&HerdInput::events, ""), "events", "expected a whole number"},
      {with(&HerdInput::fail_window, "0s"), "fail_window", "must be longer than 0"},
      {with(&HerdInput::fail_window, "soon"), "fail_window", "(e.g. 60s, 4m)"},
      {with(&HerdInput::recover_at, "10s"), "recover_at", "must not be earlier"},
      {with(&HerdInput::capacity, "0/s"), "capacity", ""},
      {with(&HerdInput::capacity, "100/m"), "capacity", "a whole number of requests each second"},
      {with(&HerdInput::capacity, "fast"), "capacity", "(e.g. 50/s)"},
      {with(&HerdInput::seed, "-1"), "seed", "expected a whole number from 0 to"},
      {with(&HerdInput::seed, "1.5"), "seed", "expected a whole number from 0 to"},
  };
  for (const Case& c : cases) {
    auto s = ParseHerdScenario(c.in);
    ASSERT_FALSE(s.ok()) << c.field << " " << c.says;
    EXPECT_EQ(s.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(s.status().field(), c.field) << s.status().message();
    EXPECT_NE(s.status().message().find(c.says), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().rfind(std::string(c.field) + ":", 0), 0u)
        << "the caller names the field: " << s.status().message();
  }
}

TEST(HerdInputTest, PoliciesKeepTheirOrderAndTheirNames) {
  HerdInput in;
  in.policies = {{kPreset, "pro"},
                 {kJson, R"({"jitter": "full"})"},
                 {kJson, R"("free")"},
                 {kPreset, "default"}};
  auto s = ParseHerdStrategies(in);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<std::string> names;
  for (const HerdStrategy& x : *s) names.push_back(x.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pro", "custom exponential/full", "free", "default"}));
  EXPECT_EQ((*s)[1].policy.jitter, policy::Jitter::kFull);
}

TEST(HerdInputTest, BadPoliciesNameTheArgumentThenThePolicysField) {
  struct Case {
    PolicyArgument arg;
    const char* field;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{kPreset, "platinum"}, "policy", "preset: unknown preset \"platinum\""},
           {{kPreset, ""}, "policy", "preset: unknown preset"},
           {{kJson, "{nope"}, "policy_json", "not valid JSON"},
           {{kJson, R"({"jitter": "sideways"})"}, "policy_json", "jitter: "},
           {{kJson, R"({"max_attempts": 0})"}, "policy_json", "max_attempts: "},
           {{kJson, "[1]"}, "policy_json", "must be a preset name or an object"},
       }) {
    HerdInput in;
    in.policies = {{kPreset, "pro"}, c.arg};
    auto s = ParseHerdStrategies(in);
    ASSERT_FALSE(s.ok()) << c.says;
    EXPECT_EQ(s.status().field(), c.field);
    EXPECT_NE(s.status().message().find(c.says), std::string::npos) << s.status().message();
  }
}

TEST(HerdInputTest, LimitsCountEventsTimesAttempts) {
  HerdScenario scenario;
  scenario.events = 1000;
  std::vector<HerdStrategy> strategies = DefaultHerdStrategies();
  // 4 jitters × 6 + default 6 + free 3 + pro 5 + scale 10 attempts.
  EXPECT_EQ(HerdRequestBound(scenario, strategies), 1000 * 48);
  HerdLimits limits;
  limits.max_events = 1000;
  limits.max_strategies = 8;
  limits.max_requests = 48'000;
  EXPECT_TRUE(CheckHerdLimits(scenario, strategies, limits).ok());

  limits.max_requests = 47'999;
  Status st = CheckHerdLimits(scenario, strategies, limits);
  EXPECT_EQ(st.field(), "events");
  EXPECT_NE(st.message().find("up to 48000 requests"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("at most 47999"), std::string::npos) << st.message();

  limits.max_requests = 48'000;
  scenario.events = 10;
  strategies.push_back(strategies[0]);
  st = CheckHerdLimits(scenario, strategies, limits);
  EXPECT_EQ(st.field(), "policy");
  EXPECT_NE(st.message().find("at most 8 policies"), std::string::npos) << st.message();
}

TEST(HerdInputTest, AnEventLimitBelowTheSimulatorsIsToldAsSuch) {
  HerdLimits limits;
  limits.max_events = 1000;
  HerdInput in;
  in.events = "1000";
  EXPECT_TRUE(ParseHerdScenario(in, limits).ok());
  for (const char* events : {"1001", "0"}) {
    in.events = events;
    auto s = ParseHerdScenario(in, limits);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().field(), "events");
    EXPECT_NE(s.status().message().find("must be between 1 and 1000, got " + std::string(events) +
                                        " (here; `hookrelay simulate herd` takes up to 10000000)"),
              std::string::npos)
        << s.status().message();
  }
}

TEST(PolicyArgumentTest, OneResolverForPresetsAndJson) {
  auto pro = policy::ResolvePolicyArgument({kPreset, "pro"});
  ASSERT_TRUE(pro.ok());
  EXPECT_EQ(pro->preset, "pro");
  auto same = policy::ResolvePolicyArgument({kJson, R"("pro")"});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, *pro);
  auto bad = policy::ResolvePolicyArgument({kJson, std::string(1000, '{')});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().field().empty());
  EXPECT_LT(bad.status().message().size(), 400u) << "a long text is cut in the message";
  Status named = policy::ArgumentError("--policy-json", Status::InvalidArgument("bad", "cap"));
  EXPECT_EQ(named.message(), "--policy-json: cap: bad");
  EXPECT_EQ(named.field(), "--policy-json");
  auto seed = policy::ParseSeedArgument("-1");
  ASSERT_FALSE(seed.ok());
  EXPECT_EQ(seed.status().field(), "seed");
  EXPECT_EQ(*policy::ParseSeedArgument("0"), 0u);
}

}  // namespace
}  // namespace hookrelay::sim
