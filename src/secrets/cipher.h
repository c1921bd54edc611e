#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

// AES-256-GCM (OpenSSL) for the secrets kept at rest (docs/secrets.md). Pure: no I/O (the nonce
// comes from the system's random source).

namespace hookrelay::secrets {

inline constexpr size_t kKeyBytes = 32;    // AES-256
inline constexpr size_t kNonceBytes = 12;  // GCM's 96-bit nonce, random per message
inline constexpr size_t kTagBytes = 16;

// nonce || ciphertext || tag of `plaintext` under `key` (kKeyBytes), binding `context` (not
// stored: the same context must be given to Open, so a sealed value moved to another place does
// not open there).
std::string Seal(std::string_view key, std::string_view plaintext, std::string_view context);
// The plaintext; kFailedPrecondition when `sealed` was not sealed by `key` with `context` (a wrong
// key, a change, another context), never a wrong plaintext.
Result<std::string> Open(std::string_view key, std::string_view sealed, std::string_view context);

}  // namespace hookrelay::secrets
