#include "common/redact.h"

#include <algorithm>

namespace hookrelay {

std::string RedactUrlCredentials(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (;;) {
    const size_t scheme = text.find("://", pos);
    if (scheme == std::string_view::npos) break;
    const size_t start = scheme + 3;
    // The authority ends at the first '/', '?', '#' or whitespace; userinfo is before its last '@'.
    size_t end = start;
    while (end < text.size() && text[end] != '/' && text[end] != '?' && text[end] != '#' &&
           text[end] != ' ' && text[end] != '\t' && text[end] != '\n' && text[end] != '"' &&
           text[end] != '\'') {
      ++end;
    }
    const size_t at = text.substr(start, end - start).rfind('@');
    out.append(text.substr(pos, start - pos));
    if (at != std::string_view::npos) {
      out += "***";
      out.append(text.substr(start + at, end - start - at));
    } else {
      out.append(text.substr(start, end - start));
    }
    pos = end;
  }
  out.append(text.substr(pos));
  return out;
}

std::string RedactSecretValues(std::string text, std::vector<std::string> secrets,
                               std::string_view replacement) {
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& secret : secrets) {
    if (secret.size() < kMinRedactedSecret) continue;
    for (size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + replacement.size())) {
      text.replace(at, secret.size(), replacement);
    }
  }
  return text;
}

std::string RedactSnippet(std::string text, std::vector<std::string> secrets,
                          std::string_view replacement, bool cut, size_t limit) {
  std::erase_if(secrets, [](const std::string& s) { return s.size() < kMinRedactedSecret; });
  text = RedactSecretValues(std::move(text), secrets, replacement);
  if (cut) {
    // The longest tail that begins a secret (a whole one was replaced above, so only proper
    // prefixes are left), wherever it starts.
    size_t from = text.size();
    for (const std::string& secret : secrets) {
      const size_t longest = std::min(text.size(), secret.size() - 1);
      for (size_t n = longest; n > 0 && text.size() - n < from; --n) {
        if (std::string_view(text).substr(text.size() - n) ==
            std::string_view(secret).substr(0, n)) {
          from = text.size() - n;
          break;
        }
      }
    }
    if (from < text.size()) text.replace(from, text.npos, replacement);
  }
  if (text.size() > limit) text.resize(limit);
  return text;
}

}  // namespace hookrelay
