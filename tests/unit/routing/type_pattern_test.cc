#include "routing/type_pattern.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hookrelay::routing {
namespace {

TypeSet MustParse(const std::vector<std::string>& patterns) {
  Result<TypeSet> set = ParseTypes(patterns, "types");
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? *set : TypeSet();
}

struct MatchCase {
  std::vector<std::string> patterns;
  std::optional<std::string> type;
  std::string reason;  // empty: matches
};

TEST(TypeSetTest, MatchesExactNamesAndTrailingWildcards) {
  const std::vector<MatchCase> cases = {
      {{"invoice.*"}, "invoice.paid", ""},
      {{"invoice.*"}, "invoice.payment.failed", ""},
      {{"invoice.*"}, "invoice", "type invoice is not in [invoice.*]"},
      {{"invoice.*"}, "invoice.", "type invoice. is not in [invoice.*]"},
      {{"invoice.*"}, "invoices.paid", "type invoices.paid is not in [invoice.*]"},
      {{"invoice.*"}, "Invoice.paid", "type Invoice.paid is not in [invoice.*]"},
      {{"inv*"}, "invoice.paid", ""},
      {{"customer.*"}, "invoice.paid", "type invoice.paid is not in [customer.*]"},
      {{"customer.*"}, std::nullopt, "the event has no type; the route wants [customer.*]"},
      {{"invoice.paid"}, "invoice.paid", ""},
      {{"invoice.paid"}, "invoice.paid.late", "type invoice.paid.late is not in [invoice.paid]"},
      {{"invoice.paid"}, "invoice.pai", "type invoice.pai is not in [invoice.paid]"},
      {{"a", "b.*", "c"}, "a", ""},
      {{"a", "b.*", "c"}, "c", ""},
      {{"a", "b.*", "c"}, "b.x", ""},
      {{"a", "b.*", "c"}, "d", "type d is not in [a, b.*, c]"},
      {{"a", "a"}, "a", ""},
      {{"*"}, "anything.at.all", ""},
      {{"*"}, "", ""},
      {{"*"}, std::nullopt, "the event has no type; the route wants [*]"},
      {{}, "invoice.paid", ""},
      {{}, std::nullopt, ""},
      // Types are shown as text: control characters escaped, long ones cut.
      {{"a"}, std::string("x\ny"), "type x\\ny is not in [a]"},
      {{"a"}, std::string(70, 't'), "type " + std::string(60, 't') + "… is not in [a]"},
  };
  for (const MatchCase& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.patterns) + " " + c.type.value_or("(none)"));
    const TypeSet set = MustParse(c.patterns);
    const std::optional<std::string_view> type =
        c.type ? std::optional<std::string_view>(*c.type) : std::nullopt;
    const Verdict v = set.Match(type);
    EXPECT_EQ(v.matched, c.reason.empty());
    EXPECT_EQ(v.reason, c.reason);
    EXPECT_EQ(set.Matches(type), v.matched);
  }
}

TEST(TypeSetTest, DefaultIsNoConstraint) {
  const TypeSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_TRUE(set.Matches(std::nullopt));
  EXPECT_TRUE(set.Matches("x"));
}

TEST(TypeSetTest, KeepsThePatternsAsGiven) {
  const TypeSet set = MustParse({"z.*", "a", "a"});
  EXPECT_EQ(set.patterns(), (std::vector<std::string>{"z.*", "a", "a"}));
  EXPECT_FALSE(set.empty());
  EXPECT_EQ(set, MustParse({"z.*", "a", "a"}));
  EXPECT_FALSE(set == MustParse({"a", "z.*"}));
}

TEST(TypeSetTest, ReasonCutsALongList) {
  std::vector<std::string> patterns;
  for (int i = 0; i < 40; ++i) patterns.push_back((i < 10 ? "p0" : "p") + std::to_string(i) + ".*");
  std::string shown = "[";
  for (int i = 0; i < 17; ++i) shown += patterns[i] + ", ";
  shown += "… 23 more]";
  EXPECT_EQ(MustParse(patterns).Match("x").reason, "type x is not in " + shown);
}

struct ErrorCase {
  std::vector<std::string> patterns;
  std::string field;
  std::string message;
};

TEST(ParseTypesTest, RefusesInvalidPatternsNamingTheField) {
  const std::string long_pattern(257, 'x');
  const std::vector<ErrorCase> cases = {
      {{"invoice.paid", "*.paid"}, "types[1]", "\"*.paid\": a wildcard may only end a pattern"},
      {{"in*v*"}, "types[0]", "\"in*v*\": a wildcard may only end a pattern"},
      {{"**"}, "types[0]", "\"**\": a wildcard may only end a pattern"},
      {{"a", "b", ""}, "types[2]", "\"\": a pattern may not be empty"},
      {{"a b"}, "types[0]", "\"a b\": only printable ASCII without spaces is allowed"},
      {{"a\tb"}, "types[0]", "\"a\\tb\": only printable ASCII without spaces is allowed"},
      {{"caf\xc3\xa9"},
       "types[0]",
       "\"caf\xc3\xa9\": only printable ASCII without spaces is allowed"},
      {{"a\x7f"}, "types[0]", "\"a\\u007f\": only printable ASCII without spaces is allowed"},
      {{long_pattern}, "types[0]", "\"" + std::string(59, 'x') + "…: longer than 256 characters"},
      {std::vector<std::string>(101, "a"), "types", "at most 100 patterns, got 101"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.patterns));
    Result<TypeSet> set = ParseTypes(c.patterns, "types");
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(set.status().field(), c.field);
    EXPECT_EQ(set.status().message(), c.message);
  }
}

// One pattern on its own (an event list's or a bulk replay's `type`): the message names the
// field, as the API shows it alone (found by api_body_fuzzer).
TEST(ValidateTypePatternTest, TheMessageNamesTheField) {
  EXPECT_TRUE(ValidateTypePattern("invoice.*", "type").ok());
  Status s = ValidateTypePattern(" 100/s", "type");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.field(), "type");
  EXPECT_EQ(s.message(), "type: \" 100/s\": only printable ASCII without spaces is allowed");
  EXPECT_EQ(ValidateTypePattern("a*b", "type").message(),
            "type: \"a*b\": a wildcard may only end a pattern");
}

TEST(ParseTypesTest, AcceptsTheLimits) {
  EXPECT_TRUE(ParseTypes({std::string(256, 'x')}, "types").ok());
  EXPECT_TRUE(ParseTypes(std::vector<std::string>(100, "a.*"), "types").ok());
  EXPECT_TRUE(ParseTypes({"!~#$%&'+-./:;<=>?@[]^_`{|}*"}, "types").ok());
  EXPECT_TRUE(ParseTypes({}, "types").ok());
}

TEST(ParseTypesTest, FieldIsTheCallersPath) {
  Result<TypeSet> set = ParseTypes({"a", "*.b"}, "routes[2].types");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().ToString(),
            "invalid_argument: routes[2].types[1]: \"*.b\": a wildcard may only end a pattern");
}

TEST(ParseTypesTest, FromJson) {
  Result<TypeSet> set =
      ParseTypesFromJson(boost::json::parse(R"(["invoice.*", "customer.created"])"), "types");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->Matches("invoice.paid"));
  EXPECT_FALSE(set->Matches("customer.deleted"));

  Result<TypeSet> none = ParseTypesFromJson(boost::json::parse("null"), "types");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  Result<TypeSet> bad = ParseTypesFromJson(boost::json::parse(R"(["a", 1])"), "types");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "types[1]");
  EXPECT_EQ(bad.status().message(), "expects a string");

  Result<TypeSet> scalar = ParseTypesFromJson(boost::json::parse(R"("invoice.*")"), "types");
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().field(), "types");
  EXPECT_EQ(scalar.status().message(), "expects an array of strings");

  Result<TypeSet> wildcard = ParseTypesFromJson(boost::json::parse(R"(["a", "*.b"])"), "types");
  ASSERT_FALSE(wildcard.ok());
  EXPECT_EQ(wildcard.status().field(), "types[1]");
}

}  // namespace
}  // namespace hookrelay::routing
