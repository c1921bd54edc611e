// The docs cannot drift from the CLI: every `hookrelay …` command shown in README.md and
// docs/*.md (in code blocks and inline code) names subcommands that exist, and every `--flag` it
// shows is listed by that subcommand's `--help`. The real binary's help is the reference: the
// subcommand tree is read from `hookrelay --help`, then each subcommand's own `--help`.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/process.h"

namespace hookrelay {
namespace {

using testing::RunProgram;
using testing::RunResult;

// One subcommand: its help text and its subcommands by name.
struct Command {
  std::string help;
  std::map<std::string, Command> subcommands;
};

// The names listed under "Subcommands:" in a CLI11 help text.
std::vector<std::string> SubcommandNames(const std::string& help) {
  std::vector<std::string> names;
  const size_t at = help.find("\nSubcommands:\n");
  if (at == std::string::npos) return names;
  std::istringstream lines(help.substr(at + 14));
  std::string line;
  static const std::regex kEntry(R"(^  ([a-z][a-z0-9-]*)(\s|$))");
  while (std::getline(lines, line)) {
    if (line.empty()) break;
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) names.push_back(m[1]);
  }
  return names;
}

Command ReadCommand(std::vector<std::string> path, int depth = 0) {
  Command c;
  std::vector<std::string> args = {HOOKRELAY_BINARY};
  args.insert(args.end(), path.begin(), path.end());
  args.push_back("--help");
  RunResult r = RunProgram(args, {}, std::chrono::seconds(60), {{"COLUMNS", "200"}});
  EXPECT_EQ(r.exit_code, 0) << "hookrelay " << ::testing::PrintToString(path) << " --help";
  c.help = r.out + r.err;
  if (depth > 3) return c;
  for (const std::string& name : SubcommandNames(c.help)) {
    std::vector<std::string> sub = path;
    sub.push_back(name);
    c.subcommands.emplace(name, ReadCommand(sub, depth + 1));
  }
  return c;
}

// A command line shown in a doc, where it was shown.
struct Shown {
  std::string where;
  std::string text;  // after "hookrelay "
};

// The `hookrelay …` command lines of one Markdown file: lines of fenced code blocks, and inline
// code spans, that start with hookrelay (optionally after "$ " and a build path).
std::vector<Shown> CommandsIn(const std::filesystem::path& file) {
  std::vector<Shown> shown;
  std::istringstream lines(testing::ReadFile(file.string()));
  std::string line;
  int n = 0;
  bool fenced = false;
  static const std::regex kStart(R"(^\s*(?:\$\s+)?(?:\S*/)?hookrelay\s+(.*)$)");
  static const std::regex kInline(R"(`(?:\S*/)?hookrelay\s+([^`]*)`)");
  const std::string name = file.filename().string();
  while (std::getline(lines, line)) {
    ++n;
    const std::string where = name + ":" + std::to_string(n);
    if (const size_t text = line.find_first_not_of(' ');
        text != std::string::npos && line.compare(text, 3, "```") == 0) {
      fenced = !fenced;
      continue;
    }
    // A shell line continued with a backslash: the command goes on on the next line.
    while (fenced && !line.empty() && line.back() == '\\') {
      std::string next;
      if (!std::getline(lines, next)) break;
      ++n;
      line.pop_back();
      line += " " + next;
    }
    std::smatch m;
    if (fenced) {
      if (std::regex_match(line, m, kStart)) shown.push_back({where, m[1]});
      continue;
    }
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kInline);
         it != std::sregex_iterator(); ++it) {
      shown.push_back({where, (*it)[1]});
    }
  }
  return shown;
}

std::vector<std::string> Words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

// Splits "a | b" alternatives (a `|` with spaces around it; `a|b` inside a word is one value's
// choices) and drops a trailing "# comment".
std::vector<std::string> Alternatives(std::string text) {
  if (size_t hash = text.find(" #"); hash != std::string::npos) text.resize(hash);
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t bar; (bar = text.find(" | ", from)) != std::string::npos; from = bar + 3) {
    out.push_back(text.substr(from, bar - from));
  }
  out.push_back(text.substr(from));
  return out;
}

class DocsCommandsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { root_ = new Command(ReadCommand({})); }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static Command* root_;
};
Command* DocsCommandsTest::root_ = nullptr;

TEST_F(DocsCommandsTest, TheSubcommandTreeIsRead) {
  // The reference itself: if reading the help broke, every doc would pass vacuously.
  ASSERT_GE(root_->subcommands.size(), 8u) << root_->help;
  ASSERT_TRUE(root_->subcommands.count("events"));
  EXPECT_TRUE(root_->subcommands.at("events").subcommands.count("list"));
  EXPECT_TRUE(root_->subcommands.at("destinations").subcommands.count("pause"));
}

TEST_F(DocsCommandsTest, EveryCommandAndFlagInTheDocsExists) {
  std::vector<std::filesystem::path> files = {std::filesystem::path(HOOKRELAY_SOURCE_DIR) /
                                              "README.md"};
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(HOOKRELAY_SOURCE_DIR) / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  int commands = 0;
  int flags = 0;
  static const std::regex kFlag(R"(--([a-z][a-z0-9-]*))");
  for (const auto& file : files) {
    for (const Shown& s : CommandsIn(file)) {
      const Command* parent = nullptr;  // the chain's parent, for "… | sibling ARGS"
      const Command* last = nullptr;
      for (const std::string& alternative : Alternatives(s.text)) {
        std::vector<std::string> words = Words(alternative);
        if (words.empty()) continue;
        // Where this alternative starts: a top-level subcommand, a sibling of the previous
        // chain's last subcommand, or (it starts with a flag) the previous chain itself.
        const Command* at = root_;
        const Command* at_parent = nullptr;
        size_t i = 0;
        if (root_->subcommands.count(words[0])) {
          at = root_;
        } else if (parent && parent->subcommands.count(words[0])) {
          at = parent;
        } else if (last && words[0].rfind("-", 0) == 0) {
          at = last;
        } else if (last == nullptr &&
                   (words[0].back() == ':' ||
                    std::isdigit(static_cast<unsigned char>(words[0][0])) || words[0] == "…")) {
          break;  // output ("hookrelay serve: …", "hookrelay 0.1.0 listening …"), or "hookrelay …"
        } else if (last == nullptr && words[0].find('|') != std::string::npos) {
          // "sources|destinations|routes add|update|rm": each name is a subcommand.
          std::istringstream names(words[0]);
          for (std::string name; std::getline(names, name, '|');) {
            EXPECT_TRUE(root_->subcommands.count(name))
                << s.where << ": \"" << name << "\" in `hookrelay " << s.text
                << "` is not a subcommand";
          }
          break;
        } else {
          ADD_FAILURE() << s.where << ": \"" << alternative << "\" in `hookrelay " << s.text
                        << "` is not a subcommand";
          break;
        }
        for (; i < words.size() && at->subcommands.count(words[i]); ++i) {
          at_parent = at;
          at = &at->subcommands.at(words[i]);
        }
        ++commands;
        for (auto it = std::sregex_iterator(alternative.begin(), alternative.end(), kFlag);
             it != std::sregex_iterator(); ++it) {
          const std::string flag = "--" + (*it)[1].str();
          ++flags;
          const std::regex listed("(^|[ ,])" + flag + "([ =:\\[]|$)", std::regex::multiline);
          EXPECT_TRUE(std::regex_search(at->help, listed))
              << s.where << ": `hookrelay " << s.text << "` shows " << flag
              << ", which its --help does not list:\n"
              << at->help;
        }
        if (at_parent) parent = at_parent;
        last = at;
      }
    }
  }
  // The docs show commands; finding none means the scan broke, not that the docs are right.
  EXPECT_GE(commands, 30);
  EXPECT_GE(flags, 30);
  std::cout << commands << " commands and " << flags << " flags checked\n";
}

// Every relative link in README.md and docs/*.md points at a file that exists (anchors are not
// checked), so moving a section between files cannot leave a dead link behind.
TEST(DocsLinksTest, EveryRelativeLinkResolves) {
  namespace fs = std::filesystem;
  const fs::path root(HOOKRELAY_SOURCE_DIR);
  std::vector<fs::path> files = {root / "README.md"};
  for (const auto& entry : fs::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  static const std::regex kLink(R"(\]\(([^)\s]+)\))");
  int links = 0;
  for (const fs::path& file : files) {
    const std::string text = testing::ReadFile(file.string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kLink);
         it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0 ||
          target[0] == '#') {
        continue;
      }
      if (size_t hash = target.find('#'); hash != std::string::npos) target.resize(hash);
      ++links;
      EXPECT_TRUE(fs::exists(file.parent_path() / target))
          << file.filename().string() << " links to " << target << ", which does not exist";
    }
  }
  EXPECT_GE(links, 40) << "the scan found too few links to mean anything";
}

}  // namespace
}  // namespace hookrelay
