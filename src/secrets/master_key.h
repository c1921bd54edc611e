#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

// The master key (docs/secrets.md): 32 random bytes, written as base64, that wraps the data key
// the stored secrets are encrypted under. Pure: where it is read from is app/master_key_file.h.

namespace hookrelay::secrets {

struct MasterKey {
  std::string bytes;  // kKeyBytes
  // A short name for it that says nothing about it: the first 8 bytes of SHA-256 over a label and
  // the key, in hex. Stored next to the data key it wraps; shown in messages and `keys list`.
  std::string id;
};

// From its base64 text (surrounding whitespace ignored). `where` names it in errors
// ("HOOKRELAY_MASTER_KEY: must be 32 bytes in base64 (openssl rand -base64 32), not 12").
Result<MasterKey> ParseMasterKey(std::string_view text, std::string_view where);
// A new random key, as its base64 text.
std::string NewMasterKeyText();

}  // namespace hookrelay::secrets
