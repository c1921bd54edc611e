#include "common/standard_webhooks.h"

#include <openssl/evp.h>

#include "common/crypto.h"

namespace hookrelay::standard_webhooks {

Result<std::string> DecodeSecret(std::string_view secret) {
  if (secret.substr(0, kSecretPrefix.size()) != kSecretPrefix) {
    return Status::InvalidArgument("must start with \"whsec_\" followed by base64");
  }
  auto key = Base64Decode(secret.substr(kSecretPrefix.size()));
  if (!key || key->size() < 16 || key->size() > 64) {
    return Status::InvalidArgument(
        "must be \"whsec_\" followed by the base64 of 16 to 64 random bytes");
  }
  return *key;
}

std::string Signature(std::string_view key, std::string_view id, std::string_view timestamp,
                      std::string_view body) {
  unsigned char mac[32];
  HmacSha256Parts(key, {id, ".", timestamp, ".", body}, mac);
  unsigned char base64[4 * ((sizeof mac + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(base64, mac, sizeof mac);
  return std::string(reinterpret_cast<const char*>(base64), static_cast<size_t>(n));
}

}  // namespace hookrelay::standard_webhooks
