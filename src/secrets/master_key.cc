#include "secrets/master_key.h"

#include "common/crypto.h"
#include "secrets/cipher.h"

namespace hookrelay::secrets {

Result<MasterKey> ParseMasterKey(std::string_view text, std::string_view where) {
  const std::string_view space = " \t\r\n";
  const size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos) {
    return Status::InvalidArgument(std::string(where) +
                                   ": is empty (32 bytes in base64: openssl rand -base64 32)");
  }
  text = text.substr(first, text.find_last_not_of(space) - first + 1);
  std::optional<std::string> bytes = Base64Decode(text);
  if (!bytes) {
    return Status::InvalidArgument(std::string(where) +
                                   ": is not base64 (32 bytes in base64: openssl rand -base64 32)");
  }
  if (bytes->size() != kKeyBytes) {
    return Status::InvalidArgument(std::string(where) + ": must be 32 bytes in base64 (openssl " +
                                   "rand -base64 32), not " + std::to_string(bytes->size()));
  }
  MasterKey k;
  k.id = HexEncode(Sha256("hookrelay master key id\n" + *bytes).substr(0, 8));
  k.bytes = std::move(*bytes);
  return k;
}

std::string NewMasterKeyText() { return Base64Encode(RandomBytes(kKeyBytes)); }

}  // namespace hookrelay::secrets
