// Issue 27: where a transform's request goes and which headers it may set (pure).
#include "delivery/transformed_request.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "model/transform_spec.h"

namespace hookrelay::delivery {
namespace {

TEST(TransformedRequestTest, TheTargetKeepsSchemeHostAndPortApart) {
  auto t = SplitTarget("https://user:pw@hooks.example.com:8443/in/stripe?k=1&b=2");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->origin, "https://user:pw@hooks.example.com:8443");
  EXPECT_EQ(t->path, "/in/stripe");
  EXPECT_EQ(t->query, "k=1&b=2");
  t = SplitTarget("http://h.example");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->path, "/");
  EXPECT_EQ(t->query, "");
}

TEST(TransformedRequestTest, TheScriptCannotSetSignaturesCredentialsOrFraming) {
  model::Destination d;
  d.auth.kind = model::DestinationAuth::Kind::kBearer;
  d.auth.header_value = "Bearer real";
  HeaderPairs from_script = {{"x-a", "1"},
                             {"authorization", "Bearer forged"},
                             {"webhook-signature", "v1,forged"},
                             {"content-length", "1"},
                             {"Host", "evil.example"}};
  HeaderPairs out = TransformedHeaders(from_script, d, {{"webhook-signature", "v1,real"}});
  EXPECT_EQ(out,
            (HeaderPairs{
                {"x-a", "1"}, {"Authorization", "Bearer real"}, {"webhook-signature", "v1,real"}}));
  // Without "auth", an Authorization the script sets is its own to send.
  out = TransformedHeaders({{"authorization", "Basic x"}}, model::Destination{}, {});
  EXPECT_EQ(out, (HeaderPairs{{"authorization", "Basic x"}}));
}

TEST(TransformedRequestTest, HeadersChangedNamesWhatWasAddedChangedOrRemoved) {
  const HeaderPairs before = {{"Content-Type", "application/json"},
                              {"X-A", "1"},
                              {"X-A", "2"},
                              {"X-Gone", "g"},
                              {"X-Same", "s"}};
  const HeaderPairs after = {
      {"content-type", "application/json"}, {"x-a", "1, 2"}, {"x-same", "t"}, {"x-new", "n"}};
  EXPECT_EQ(HeadersChanged(before, after), "x-gone, x-new, x-same");
  EXPECT_EQ(HeadersChanged(before, before), "");
}

TEST(TransformSpecTest, ScriptOrObjectWithLimitsAndNamedErrors) {
  auto s = model::ParseTransformSpec(boost::json::parse(R"("function transform(r) { return r }")"),
                                     "transform");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->cpu.has_value());
  s = model::ParseTransformSpec(
      boost::json::parse(
          R"({"script": "function transform(r) {}", "cpu": "20ms", "memory": "8MiB"})"),
      "transform");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->cpu, std::chrono::milliseconds(20));
  EXPECT_EQ(s->memory, 8u << 20);
  for (auto [json, field] : {std::pair{R"({"script": "x", "cpu": "0ms"})", "transform.cpu"},
                             {R"({"script": "x", "memory": "1KiB"})", "transform.memory"},
                             {R"({"script": 3})", "transform.script"},
                             {R"({"cpu": "1s"})", "transform.script"},
                             {R"({"script": "x", "colour": 1})", "transform.colour"},
                             {R"("   ")", "transform"},
                             {"42", "transform"}}) {
    auto bad = model::ParseTransformSpec(boost::json::parse(json), "transform");
    ASSERT_FALSE(bad.ok()) << json;
    EXPECT_EQ(bad.status().field(), field) << json << ": " << bad.status().ToString();
  }
}

}  // namespace
}  // namespace hookrelay::delivery
