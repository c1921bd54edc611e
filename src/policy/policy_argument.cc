#include "policy/policy_argument.h"

#include <boost/json/parse.hpp>
#include <charconv>

namespace hookrelay::policy {

Result<RetryPolicy> ResolvePolicyArgument(const PolicyArgument& arg) {
  if (arg.kind == PolicyArgument::Kind::kPreset) return PresetPolicy(arg.text);
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(arg.text, ec);
  if (ec) {
    // The text is quoted back: a shell's quoting mistake is easier to see in it.
    constexpr size_t kShown = 200;
    const std::string shown =
        arg.text.size() > kShown ? arg.text.substr(0, kShown) + "…" : arg.text;
    return Status::InvalidArgument("not valid JSON: " + ec.message() + " (got '" + shown + "')");
  }
  return ParsePolicy(v);
}

Result<uint64_t> ParseSeedArgument(const std::string& text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(
        "expected a whole number from 0 to 18446744073709551615, got \"" + text + "\"", "seed");
  }
  return v;
}

Status ArgumentError(const std::string& argument, const Status& st) {
  return Status::InvalidArgument(
      argument + ": " + (st.field().empty() ? "" : st.field() + ": ") + st.message(), argument);
}

}  // namespace hookrelay::policy
