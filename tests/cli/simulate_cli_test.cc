// Black-box tests of `hookrelay simulate herd`: the real binary, its stdout, stderr, exit code
// and the SVG file it writes.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <fstream>
#include <sstream>

#include "support/process.h"

namespace hookrelay {
namespace {

namespace json = boost::json;
namespace pt = boost::property_tree;
using testing::RunProgram;
using testing::RunResult;

const std::vector<std::string> kDefaultSet = {"none",    "full", "equal", "decorrelated",
                                              "default", "free", "pro",   "scale"};

RunResult Herd(std::vector<std::string> args) {
  args.insert(args.begin(), {HOOKRELAY_BINARY, "simulate", "herd"});
  return RunProgram(args);
}

json::object HerdJson(std::vector<std::string> args) {
  args.push_back("--json");
  RunResult r = Herd(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out).as_object();
}

TEST(SimulateCliTest, TheTableHasARowPerStrategyWithin80Columns) {
  RunResult r = Herd({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> rows;
  bool in_table = false;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 80u) << line;
    if (line.rfind("strategy ", 0) == 0) {
      in_table = true;
      for (const char* h : {"peak/s", "p99/s", "requests", "failed", "exhausted", "drain"}) {
        EXPECT_NE(line.find(h), std::string::npos) << h;
      }
      continue;
    }
    if (in_table && !line.empty()) rows.push_back(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(rows, kDefaultSet) << r.out;
  EXPECT_NE(r.out.find("500 events fail within 1m"), std::string::npos) << r.out;
}

TEST(SimulateCliTest, JsonHasTheContractsFieldsForEachStrategy) {
  json::object doc = HerdJson({"--fail-window", "1s", "--seed", "3"});
  const json::object& scenario = doc.at("scenario").as_object();
  EXPECT_EQ(scenario.at("events").as_int64(), 500);
  EXPECT_EQ(scenario.at("fail_window").as_string(), "1s");
  EXPECT_EQ(scenario.at("recover_at").as_string(), "4m");
  EXPECT_EQ(scenario.at("capacity").as_string(), "50/s");
  EXPECT_EQ(scenario.at("seed").as_int64(), 3);
  const json::array& list = doc.at("strategies").as_array();
  ASSERT_EQ(list.size(), kDefaultSet.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json::object& s = list[i].as_object();
    EXPECT_EQ(s.at("strategy").as_string(), kDefaultSet[i]);
    for (const char* f : {"peak_per_second", "p99_per_second", "requests", "failed_requests",
                          "exhausted", "delivered"}) {
      ASSERT_TRUE(s.contains(f) && s.at(f).is_int64()) << kDefaultSet[i] << " " << f;
    }
    ASSERT_TRUE(s.at("drain_seconds").is_number()) << kDefaultSet[i];
    EXPECT_EQ(s.at("delivered").as_int64() + s.at("exhausted").as_int64(), 500);
    EXPECT_EQ(s.at("requests").as_int64(),
              s.at("failed_requests").as_int64() + s.at("delivered").as_int64());
  }
  // The burst: every one of the 500 arrives in one second without jitter.
  EXPECT_EQ(list[0].at("peak_per_second").as_int64(), 500);
  EXPECT_LE(list[2].at("peak_per_second").as_int64() * 5, 500);
}

TEST(SimulateCliTest, RepeatedPoliciesAreComparedInTheOrderGiven) {
  json::object doc = HerdJson(
      {"--policy", "pro", "--policy-json", R"({"jitter": "full"})", "--policy", "default"});
  const json::array& list = doc.at("strategies").as_array();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].at("strategy").as_string(), "pro");
  EXPECT_EQ(list[1].at("strategy").as_string(), "custom exponential/full");
  EXPECT_EQ(list[1].at("policy").at("jitter").as_string(), "full");
  EXPECT_EQ(list[2].at("strategy").as_string(), "default");
}

TEST(SimulateCliTest, ASeedRepeatsTheRun) {
  RunResult a = Herd({"--seed", "5", "--json", "--events", "300"});
  RunResult b = Herd({"--seed", "5", "--json", "--events", "300"});
  RunResult c = Herd({"--seed", "6", "--json", "--events", "300"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
}

TEST(SimulateCliTest, TheSvgIsXmlWithOnePolylinePerStrategy) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/herd.svg";
  RunResult r = Herd({"--fail-window", "1s", "--svg", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Chart written to " + path), std::string::npos) << r.out;
  pt::ptree tree;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  ASSERT_NO_THROW(pt::read_xml(in, tree));
  const pt::ptree& svg = tree.get_child("svg");
  EXPECT_EQ(svg.get<std::string>("<xmlattr>.xmlns"), "http://www.w3.org/2000/svg");
  std::vector<std::string> lines;
  bool title = false, capacity = false;
  size_t tick_labels = 0;
  for (const auto& [tag, child] : svg) {
    if (tag == "polyline") {
      lines.push_back(child.get<std::string>("<xmlattr>.data-strategy"));
      EXPECT_GT(child.get<std::string>("<xmlattr>.points").size(), 10u);
    } else if (tag == "text" && child.get<std::string>("<xmlattr>.class", "") == "title") {
      title = child.data().find("Requests per second") != std::string::npos;
    } else if (tag == "line" && child.get<std::string>("<xmlattr>.class", "") == "capacity") {
      capacity = !child.get<std::string>("<xmlattr>.stroke-dasharray", "").empty();
    } else if (tag == "g" && child.get<std::string>("<xmlattr>.class", "") == "ticks") {
      tick_labels = child.count("text");
    }
  }
  EXPECT_EQ(lines, kDefaultSet);
  EXPECT_TRUE(title);
  EXPECT_TRUE(capacity);
  EXPECT_GE(tick_labels, 6u);
}

TEST(SimulateCliTest, BadInputExits2NamingTheFlag) {
  testing::TempDir dir;
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--events", "0"}, "--events: must be between 1 and"},
           {{"--events", "-5"}, "--events"},
           {{"--events", "lots"}, "--events: expected a whole number"},
           {{"--capacity", "0/s"}, "--capacity"},
           {{"--seed", "-1"}, "--seed: expected a whole number"},
           {{"--capacity", "100/m"}, "--capacity: the endpoint serves a whole number"},
           {{"--fail-window", "-3s"}, "--fail-window"},
           {{"--fail-window", "0s"}, "--fail-window: must be longer than 0"},
           {{"--recover-at", "10s"}, "--recover-at: must not be earlier"},
           {{"--policy", "platinum"}, "--policy: preset: unknown preset \"platinum\""},
           {{"--policy-json", "{nope"}, "--policy-json: not valid JSON"},
           {{"--policy-json", R"({"jitter": "sideways"})"}, "--policy-json: jitter"},
           {{"--svg", dir.path() + "/no/such/dir/herd.svg"}, "--svg: cannot write"},
       }) {
    RunResult r = Herd(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.says << " not in: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace hookrelay
