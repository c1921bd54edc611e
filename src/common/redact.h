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

}  // namespace hookrelay
