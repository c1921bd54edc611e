#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hookrelay {

// `text` with the credentials of every URL in it replaced: "https://user:pw@host/x" becomes
// "https://***@host/x". For log lines that may quote a URL (transport errors). Pure.
std::string RedactUrlCredentials(std::string_view text);

// `text` with every occurrence of each of `secrets` replaced by `replacement`, longest first (so
// a secret that contains another is replaced whole). Secrets shorter than kMinRedactedSecret
// are ignored: replacing "1" or "abc" everywhere would garble the text and hide nothing. Pure.
inline constexpr size_t kMinRedactedSecret = 8;
std::string RedactSecretValues(std::string text, std::vector<std::string> secrets,
                               std::string_view replacement);

// A response snippet (the first bytes of a body that may go on: `cut`) made safe to store:
// RedactSecretValues, then, when `cut`, the longest tail of the text that is the beginning of
// one of `secrets` (one that went on past the cut; any length, so not even its first byte is
// kept) is replaced too; the result is at most `limit` bytes (a replacement longer than what it
// replaced may push the end out). Redacting before cutting matters: cut first, a secret
// straddling the cut is no longer found whole. Pure.
std::string RedactSnippet(std::string text, std::vector<std::string> secrets,
                          std::string_view replacement, bool cut, size_t limit);

}  // namespace hookrelay
