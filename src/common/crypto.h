#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace hookrelay {

// Thin wrappers over OpenSSL for signatures and tokens. Byte strings are std::string.
std::string Sha256(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HmacSha1(std::string_view key, std::string_view data);
std::string HmacSha512(std::string_view key, std::string_view data);
// HMAC-SHA256 of the concatenation of `parts` (without building it) into `out`, 32 bytes. One
// MAC context per thread is kept and re-keyed, so a signature costs no allocation once warm.
void HmacSha256Parts(std::string_view key, std::initializer_list<std::string_view> parts,
                     unsigned char (&out)[32]);

std::string HexEncode(std::string_view bytes);  // lower-case
std::optional<std::string> HexDecode(std::string_view hex);
std::string Base64Encode(std::string_view bytes);                // standard alphabet, padded
std::optional<std::string> Base64Decode(std::string_view text);  // accepts padded or not

// Compares in time independent of where the inputs differ (for signatures and tokens).
bool ConstantTimeEqual(std::string_view a, std::string_view b);

// `bytes` bytes from the OS CSPRNG.
std::string RandomBytes(size_t bytes);
// `bytes` bytes from the OS CSPRNG, hex encoded.
std::string RandomHexToken(size_t bytes);

}  // namespace hookrelay
