#pragma once

#include <string>

#include "common/result.h"
#include "secrets/master_key.h"

namespace hookrelay::app {

// Where `serve` takes the master key from (docs/secrets.md), first found first:
//   1. the environment variable HOOKRELAY_MASTER_KEY (`env_key`, when `env_set`);
//   2. [store] master_key_file (`key_file`);
//   3. <data dir>/master.key, made (random, mode 0600) when it does not exist yet.
struct LoadedMasterKey {
  secrets::MasterKey key;
  std::string from;        // "HOOKRELAY_MASTER_KEY", the file's path
  bool generated = false;  // 3., made now
  std::string warning;     // e.g. a key file others may read; empty when none
};
Result<LoadedMasterKey> LoadMasterKey(bool env_set, const std::string& env_key,
                                      const std::string& key_file, const std::string& data_dir);

// The environment variable's name.
inline constexpr const char* kMasterKeyEnv = "HOOKRELAY_MASTER_KEY";

}  // namespace hookrelay::app
