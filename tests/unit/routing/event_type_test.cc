#include "routing/event_type.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hookrelay::routing {
namespace {

namespace json = boost::json;

TypeRule MustParseRule(std::string_view text) {
  Result<TypeRule> rule = ParseTypeRule(json::parse(text), "type");
  EXPECT_TRUE(rule.ok()) << text << ": " << rule.status().ToString();
  return rule.ok() ? *rule : TypeRule();
}

struct Case {
  std::string name;
  std::string scheme;
  std::optional<std::string> rule;  // JSON text
  std::vector<HeaderField> headers;
  std::optional<std::string> body;  // JSON text; nullopt: no JSON body
  std::optional<std::string> type;
};

TEST(DeriveEventTypeTest, EachSchemeAndRule) {
  const std::string t256(256, 't');
  const std::string t257(257, 't');
  const std::vector<Case> cases = {
      {"stripe", "stripe", {}, {}, R"({"id": "evt_1", "type": "invoice.paid"})", "invoice.paid"},
      {"standard", "standard", {}, {}, R"({"type": "user.created", "data": {}})", "user.created"},
      {"stripe without type", "stripe", {}, {}, R"({"id": "evt_1"})", std::nullopt},
      {"stripe type not a string", "stripe", {}, {}, R"({"type": 5})", std::nullopt},
      {"stripe type null", "stripe", {}, {}, R"({"type": null})", std::nullopt},
      {"stripe type empty", "stripe", {}, {}, R"({"type": ""})", std::nullopt},
      {"stripe type 256 bytes", "stripe", {}, {}, R"({"type": ")" + t256 + R"("})", t256},
      {"stripe type 257 bytes", "stripe", {}, {}, R"({"type": ")" + t257 + R"("})", std::nullopt},
      {"stripe type with a newline", "stripe", {}, {}, R"({"type": "a\nb"})", std::nullopt},
      {"stripe type with DEL", "stripe", {}, {}, R"({"type": "a\u007fb"})", std::nullopt},
      {"stripe type with spaces", "stripe", {}, {}, R"({"type": "a b"})", "a b"},
      {"stripe type not at the top", "stripe", {}, {}, R"({"data": {"type": "x"}})", std::nullopt},
      {"stripe body not JSON", "stripe", {}, {}, std::nullopt, std::nullopt},
      {"stripe body an array", "stripe", {}, {}, R"([{"type": "x"}])", std::nullopt},
      {"stripe ignores headers", "stripe", {}, {{"X-Event", "x"}}, R"({})", std::nullopt},
      {"github with action",
       "github",
       {},
       {{"X-GitHub-Event", "pull_request"}},
       R"({"action": "opened", "number": 1})",
       "pull_request.opened"},
      {"github header name case",
       "github",
       {},
       {{"x-github-event", "issues"}},
       R"({"action": "closed"})",
       "issues.closed"},
      {"github without action",
       "github",
       {},
       {{"X-GitHub-Event", "push"}},
       R"({"ref": "x"})",
       "push"},
      {"github action not a string",
       "github",
       {},
       {{"X-GitHub-Event", "push"}},
       R"({"action": 5})",
       "push"},
      {"github action empty",
       "github",
       {},
       {{"X-GitHub-Event", "push"}},
       R"({"action": ""})",
       "push"},
      {"github body not JSON", "github", {}, {{"X-GitHub-Event", "ping"}}, std::nullopt, "ping"},
      {"github without header", "github", {}, {}, R"({"action": "opened"})", std::nullopt},
      {"github empty header",
       "github",
       {},
       {{"X-GitHub-Event", ""}},
       R"({"action": "opened"})",
       std::nullopt},
      {"github too long together",
       "github",
       {},
       {{"X-GitHub-Event", std::string(200, 'e')}},
       R"({"action": ")" + std::string(60, 'a') + R"("})",
       std::nullopt},
      {"shopify",
       "shopify",
       {},
       {{"X-Shopify-Topic", "orders/create"}},
       R"({"type": "x"})",
       "orders/create"},
      {"shopify without header", "shopify", {}, {}, R"({"type": "x"})", std::nullopt},
      {"hmac", "hmac", {}, {{"X-GitHub-Event", "push"}}, R"({"type": "x"})", std::nullopt},
      {"no verification", "", {}, {}, R"({"type": "x"})", std::nullopt},
      {"unknown scheme", "svix", {}, {}, R"({"type": "x"})", std::nullopt},
      {"header rule",
       "hmac",
       R"({"header": "X-Event"})",
       {{"x-event", "order.created"}},
       "{}",
       "order.created"},
      {"header rule first field",
       "",
       R"({"header": "X-Event"})",
       {{"X-Event", "a"}, {"X-Event", "b"}},
       std::nullopt,
       "a"},
      {"header rule invalid UTF-8",
       "",
       R"({"header": "X-Event"})",
       {{"X-Event", "a\xff"}},
       std::nullopt,
       std::nullopt},
      {"header rule with a control character",
       "",
       R"({"header": "X-Event"})",
       {{"X-Event", "a\x01"}},
       std::nullopt,
       std::nullopt},
      {"header rule replaces the scheme",
       "stripe",
       R"({"header": "X-Event"})",
       {},
       R"({"type": "invoice.paid"})",
       std::nullopt},
      {"json rule", "", R"({"json": "meta.kind"})", {}, R"({"meta": {"kind": "k.v"}})", "k.v"},
      {"json rule one name",
       "standard",
       R"({"json": "event"})",
       {},
       R"({"type": "x", "event": "e"})",
       "e"},
      {"json rule not a string",
       "",
       R"({"json": "meta.kind"})",
       {},
       R"({"meta": {"kind": 1}})",
       std::nullopt},
      {"json rule through an array",
       "",
       R"({"json": "meta.kind"})",
       {},
       R"({"meta": [{"kind": "k"}]})",
       std::nullopt},
      {"json rule missing", "", R"({"json": "meta.kind"})", {}, R"({"meta": {}})", std::nullopt},
      {"json rule body not JSON", "", R"({"json": "meta.kind"})", {}, std::nullopt, std::nullopt},
      {"json rule replaces github",
       "github",
       R"({"json": "kind"})",
       {{"X-GitHub-Event", "push"}},
       R"({"kind": "k"})",
       "k"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<TypeRule> rule;
    if (c.rule) rule = MustParseRule(*c.rule);
    std::optional<json::value> body;
    if (c.body) body = json::parse(*c.body);
    EXPECT_EQ(DeriveEventType(c.scheme, rule, c.headers, body ? &*body : nullptr), c.type);
  }
}

TEST(IsValidEventTypeTest, Limits) {
  EXPECT_TRUE(IsValidEventType("invoice.paid"));
  EXPECT_TRUE(IsValidEventType("caf\xc3\xa9.cr\xc3\xa9\xc3\xa9"));
  EXPECT_TRUE(IsValidEventType(std::string(256, 'a')));
  EXPECT_FALSE(IsValidEventType(""));
  EXPECT_FALSE(IsValidEventType(std::string(257, 'a')));
  EXPECT_FALSE(IsValidEventType("a\tb"));
  EXPECT_FALSE(IsValidEventType(std::string("a\0b", 3)));
  EXPECT_FALSE(IsValidEventType("\xc3"));          // cut sequence
  EXPECT_FALSE(IsValidEventType("\xc0\xaf"));      // overlong
  EXPECT_FALSE(IsValidEventType("\xed\xa0\x80"));  // surrogate
}

TEST(ParseTypeRuleTest, HeaderAndJson) {
  const TypeRule header = MustParseRule(R"({"header": "X-Event"})");
  EXPECT_EQ(header.kind, TypeRule::Kind::kHeader);
  EXPECT_EQ(header.name, "X-Event");
  EXPECT_EQ(json::serialize(TypeRuleToJson(header)), R"({"header":"X-Event"})");

  const TypeRule path = MustParseRule(R"({"json": "meta.kind"})");
  EXPECT_EQ(path.kind, TypeRule::Kind::kJson);
  EXPECT_EQ(path.name, "meta.kind");
  EXPECT_EQ(path.path, (std::vector<std::string>{"meta", "kind"}));
  EXPECT_EQ(json::serialize(TypeRuleToJson(path)), R"({"json":"meta.kind"})");
  EXPECT_EQ(MustParseRule(json::serialize(TypeRuleToJson(path))), path);

  std::string sixteen = "a";
  for (int i = 1; i < 16; ++i) sixteen += ".a";
  EXPECT_EQ(MustParseRule(R"({"json": ")" + sixteen + R"("})").path.size(), 16u);
}

TEST(ParseTypeRuleTest, ErrorsNameTheField) {
  std::string seventeen = "a";
  for (int i = 1; i < 17; ++i) seventeen += ".a";
  const std::string shape = R"(must be {"header": "X-Event"} or {"json": "meta.kind"})";
  const struct {
    std::string rule;
    std::string field;
    std::string message;
  } cases[] = {
      {R"("X-Event")", "sources[0].type", shape},
      {"{}", "sources[0].type", shape},
      {R"({"header": "a", "json": "b"})", "sources[0].type", shape},
      {R"({"hdr": "X-Event"})", "sources[0].type.hdr", R"(unknown rule (use "header" or "json"))"},
      {R"({"header": 5})", "sources[0].type.header", "expects a string"},
      {R"({"json": null})", "sources[0].type.json", "expects a string"},
      {R"({"header": "X Event"})", "sources[0].type.header",
       R"("X Event": not a valid header name)"},
      {R"({"header": ""})", "sources[0].type.header", R"("": not a valid header name)"},
      {R"({"header": "X-Évent"})", "sources[0].type.header",
       R"("X-Évent": not a valid header name)"},
      {R"({"json": ""})", "sources[0].type.json", R"("": expects field names separated by dots)"},
      {R"({"json": "meta..kind"})", "sources[0].type.json",
       R"("meta..kind": expects field names separated by dots)"},
      {R"({"json": ".kind"})", "sources[0].type.json",
       R"(".kind": expects field names separated by dots)"},
      {R"({"json": "kind."})", "sources[0].type.json",
       R"("kind.": expects field names separated by dots)"},
      {R"({"json": ")" + seventeen + R"("})", "sources[0].type.json",
       "\"" + seventeen + "\": at most 16 names"},
      {R"({"json": ")" + std::string(257, 'k') + R"("})", "sources[0].type.json",
       "longer than 256 characters"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    Result<TypeRule> rule = ParseTypeRule(json::parse(c.rule), "sources[0].type");
    ASSERT_FALSE(rule.ok());
    EXPECT_EQ(rule.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(rule.status().field(), c.field);
    EXPECT_EQ(rule.status().message(), c.message);
  }
}

}  // namespace
}  // namespace hookrelay::routing
