#include "delivery/outgoing_headers.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "delivery/kinds/http/http_sender.h"
#include "delivery/ssrf.h"

namespace hookrelay::delivery {
namespace {

model::Destination Parse(const std::string& json) {
  auto d = model::ParseDestination(boost::json::parse(json));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : model::Destination{};
}

const std::vector<store::Header> kReceived = {{"Host", "relay.example"},
                                              {"User-Agent", "GitHub-Hookshot/1"},
                                              {"X-GitHub-Event", "pull_request"},
                                              {"Authorization", "(redacted)"},
                                              {"cookie", "(redacted)"},
                                              {"Content-Type", "text/plain"},
                                              {"webhook-id", "theirs"},
                                              {"Webhook-Signature", "v1,theirs"},
                                              {"x-env", "theirs"},
                                              {"X-Multi", "1"},
                                              {"X-Multi", "2"},
                                              {"Proxy-Foo", "p"},
                                              {"TE", "trailers"}};
const HeaderPairs kStandard = {{"webhook-id", "01EVENT"}, {"webhook-timestamp", "1700000000"}};

TEST(OutgoingHeadersTest, AllForwardsWhatArrivedAndOwnHeadersWin) {
  model::Destination d =
      Parse(R"({"name": "d", "url": "https://x.example/", "headers": {"X-Env": "prod"}})");
  HeaderPairs out = OutgoingHeaders(kReceived, "application/json", d, kStandard);
  EXPECT_EQ(out, (HeaderPairs{{"User-Agent", "GitHub-Hookshot/1"},
                              {"X-GitHub-Event", "pull_request"},
                              {"X-Multi", "1"},
                              {"X-Multi", "2"},
                              {"Content-Type", "application/json"},
                              {"X-Env", "prod"},
                              {"webhook-id", "01EVENT"},
                              {"webhook-timestamp", "1700000000"}}));
}

TEST(OutgoingHeadersTest, NoneAndListNarrowIt) {
  model::Destination none =
      Parse(R"({"name": "d", "url": "https://x.example/", "forward_headers": "none"})");
  EXPECT_EQ(OutgoingHeaders(kReceived, "", none, kStandard),
            (HeaderPairs{{"Content-Type", "application/octet-stream"},
                         {"webhook-id", "01EVENT"},
                         {"webhook-timestamp", "1700000000"}}));
  model::Destination list = Parse(
      R"({"name": "d", "url": "https://x.example/", "forward_headers": ["x-github-event", "X-Multi"]})");
  EXPECT_EQ(OutgoingHeaders(kReceived, "a/b", list, kStandard),
            (HeaderPairs{{"X-GitHub-Event", "pull_request"},
                         {"X-Multi", "1"},
                         {"X-Multi", "2"},
                         {"Content-Type", "a/b"},
                         {"webhook-id", "01EVENT"},
                         {"webhook-timestamp", "1700000000"}}));
}

// A destination that sets its own Content-Type gets one Content-Type field: the configured one
// (it was sent beside the event's, two fields a receiver may read either way).
TEST(OutgoingHeadersTest, AConfiguredContentTypeReplacesTheEventsOne) {
  model::Destination d = Parse(
      R"({"name": "d", "url": "https://x.example/", "headers": {"content-type": "text/plain"}})");
  EXPECT_EQ(OutgoingHeaders(kReceived, "application/json", d, kStandard),
            (HeaderPairs{{"User-Agent", "GitHub-Hookshot/1"},
                         {"X-GitHub-Event", "pull_request"},
                         {"x-env", "theirs"},
                         {"X-Multi", "1"},
                         {"X-Multi", "2"},
                         {"content-type", "text/plain"},
                         {"webhook-id", "01EVENT"},
                         {"webhook-timestamp", "1700000000"}}));
}

TEST(ForwardHeadersFieldTest, ParsesShowsAndRefusesWhatIsNeverForwarded) {
  using boost::json::parse;
  EXPECT_EQ(boost::json::serialize(
                model::DestinationToJson(Parse(R"({"name": "d", "url": "https://x.example/"})"))
                    .at("forward_headers")),
            R"("all")");
  EXPECT_EQ(boost::json::serialize(
                model::DestinationToJson(Parse(R"({"name": "d", "url": "https://x.example/",
                                                   "forward_headers": ["X-A"]})"))
                    .at("forward_headers")),
            R"(["X-A"])");
  struct Case {
    const char* value;
    const char* field;
  };
  for (const Case& c :
       {Case{R"("some")", "forward_headers"}, Case{"3", "forward_headers"},
        Case{R"(["X-A", "Authorization"])", "forward_headers[1]"},
        Case{R"(["Host"])", "forward_headers[0]"}, Case{R"(["bad name"])", "forward_headers[0]"},
        Case{R"([1])", "forward_headers[0]"}}) {
    auto d = model::ParseDestination(
        parse(std::string(R"({"name": "d", "url": "https://x.example/", "forward_headers": )") +
              c.value + "}"));
    ASSERT_FALSE(d.ok()) << c.value;
    EXPECT_EQ(d.status().field(), c.field) << c.value;
  }
  auto bad = model::ParseDestination(
      parse(R"({"name": "d", "url": "https://x.example/", "secret_headers": ["a b"]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "secret_headers[0]");
}

TEST(CheckDestinationAddressTest, LiteralPrivateHostsNeedAllowPrivate) {
  for (const char* url :
       {"http://127.0.0.1/", "http://[::1]:8080/", "http://LOCALHOST/", "http://10.0.0.1/",
        "http://[fe80::1]/", "http://0.0.0.0/", "http://169.254.169.254/", "http://127.1/",
        "http://0x7f000001/", "http://2130706433/", "http://[::ffff:127.0.0.1]/",
        "http://[fe80::1%25eth0]/"}) {
    model::Destination d;
    d.url = url;
    Status st = CheckDestinationAddress(d, false);
    EXPECT_FALSE(st.ok()) << url;
    EXPECT_EQ(st.field(), "url") << url;
    EXPECT_NE(st.message().find(kPrivateAddressRefusal), std::string::npos) << st.message();
    EXPECT_TRUE(CheckDestinationAddress(d, true).ok()) << url;
    d.allow_private = true;
    EXPECT_TRUE(CheckDestinationAddress(d, false).ok()) << url;
  }
  model::Destination pub;
  pub.url = "https://hooks.example.com/x";
  EXPECT_TRUE(CheckDestinationAddress(pub, false).ok());
  pub.url = "http://8.8.8.8/";
  EXPECT_TRUE(CheckDestinationAddress(pub, false).ok());
}

}  // namespace
}  // namespace hookrelay::delivery
