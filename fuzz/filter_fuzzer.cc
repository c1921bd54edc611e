// Fuzzes the route filter language (src/routing/filter.h) end to end: Filter::Parse, then
// Matches and Match against an event, plus the event type derivation on the same event.
//
// Input: a filter document, then a NUL or a newline, then the event: JSON that is either
// {"headers": {name: string, …}, "body": …} (a "headers" member of strings and a "body" member,
// nothing else) or the body itself. Text that does not parse as JSON is skipped for the filter
// and stands for a body that is not JSON for the event.
//
// Invariants (abort() on violation):
//   - Parse returns a filter or an InvalidArgument with a message, whose field starts with the
//     field it was given;
//   - Matches agrees with Match; a failed match has a non-empty reason, a match none; reasons are
//     valid UTF-8 (they end up in JSON);
//   - a filter parsed again from its own document gives the same verdict;
//   - a derived event type satisfies IsValidEventType.
// Both documents are parsed with a max depth of 64 (Boost.JSON's parser does not recurse, and
// refuses deeper input), deeper than the filter's limit of 16, so that limit is exercised.

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/event_type.h"
#include "routing/filter.h"
#include "routing/render.h"

namespace {

namespace json = boost::json;
using namespace hookrelay::routing;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "filter_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::optional<json::value> ParseJson(std::string_view text) {
  json::parse_options options;
  options.max_depth = 64;
  json::error_code ec;
  json::value v = json::parse(text, ec, {}, options);
  if (ec) return std::nullopt;
  return v;
}

void CheckVerdict(const Filter& f, const MatchInput& input, const char* which) {
  const bool matches = f.Matches(input);
  const Verdict v = f.Match(input);
  if (v.matched != matches) Fail(which, "Matches and Match disagree");
  if (v.matched != v.reason.empty()) Fail(which, "reason: \"" + v.reason + "\"");
  if (!IsValidUtf8(v.reason)) Fail(which, "the reason is not UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find_first_of(std::string_view("\0\n", 2));
  const std::string_view filter_text = input.substr(0, cut);
  const std::string_view event_text =
      cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);

  // The event: headers and body.
  std::vector<HeaderField> headers = {{"Content-Type", "application/json"}};
  std::optional<json::value> event = ParseJson(event_text);
  const json::value* body = event ? &*event : nullptr;
  if (const json::object* o = event ? event->if_object() : nullptr;
      o && o->size() <= 2 && o->contains("headers")) {
    if (const json::object* h = o->at("headers").if_object()) {
      bool strings = true;
      for (const auto& [name, value] : *h) strings = strings && value.is_string();
      if (strings) {
        headers.clear();
        for (const auto& [name, value] : *h) {
          headers.emplace_back(std::string(name), std::string(value.get_string()));
        }
        body = o->if_contains("body");
      }
    }
  }
  const MatchInput match_input{headers, body};

  for (const char* scheme : {"stripe", "github", "shopify"}) {
    const std::optional<std::string> type = DeriveEventType(scheme, std::nullopt, headers, body);
    if (type && !IsValidEventType(*type)) Fail("DeriveEventType", *type);
  }

  std::optional<json::value> doc = ParseJson(filter_text);
  if (!doc) return 0;
  hookrelay::Result<Filter> f = Filter::Parse(*doc, "filter");
  if (!f.ok()) {
    const hookrelay::Status& s = f.status();
    if (s.code() != hookrelay::Status::Code::kInvalidArgument || s.message().empty() ||
        s.field().rfind("filter", 0) != 0) {
      Fail("Parse", s.ToString());
    }
    return 0;
  }
  CheckVerdict(*f, match_input, "event");
  CheckVerdict(*f, MatchInput{headers, nullptr}, "no JSON body");

  hookrelay::Result<Filter> again = Filter::Parse(f->document(), "filter");
  if (!again.ok()) Fail("Parse of its own document", again.status().ToString());
  if (again->Match(match_input).reason != f->Match(match_input).reason) {
    Fail("Parse of its own document", "another verdict");
  }
  return 0;
}
