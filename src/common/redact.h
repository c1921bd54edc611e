#pragma once

#include <string>
#include <string_view>

namespace hookrelay {

// `text` with the credentials of every URL in it replaced: "https://user:pw@host/x" becomes
// "https://***@host/x". For log lines that may quote a URL (transport errors). Pure.
std::string RedactUrlCredentials(std::string_view text);

}  // namespace hookrelay
