#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"
#include "secrets/master_key.h"
#include "store/key_store.h"

namespace hookrelay::secrets {

// The data key the stored secrets are encrypted under (docs/secrets.md), opened with a master
// key. The store keeps the data key only wrapped (AES-256-GCM) by each master key that may open
// it; this holds it in memory. Immutable once made: thread-safe.
class Keyring {
 public:
  // Opens the store's data key with `master`, first making one (wrapped by `master`) when the
  // store has none. kFailedPrecondition "master key does not match the store: …" when `master`
  // wraps none of the store's rows (or its row does not open with it): nothing is decrypted.
  static Result<Keyring> Unlock(store::KeyStore& store, const MasterKey& master,
                                const Clock& clock);

  // "enc:v1:" and the base64 of Seal(data key, plaintext, context).
  std::string Encrypt(std::string_view plaintext, std::string_view context) const;
  // Encrypt's inverse, with the same context; kFailedPrecondition when it does not open.
  Result<std::string> Decrypt(std::string_view stored, std::string_view context) const;
  // Whether `stored` was written by Encrypt (else it is plain text from before encryption).
  static bool IsEncrypted(std::string_view stored);

  // Wraps the data key by `another` too and stores that (a master key's rotation: from then on
  // either key opens the store). Returns whether it added (false: `another` wraps it already).
  Result<bool> AddMasterKey(store::KeyStore& store, const MasterKey& another,
                            const Clock& clock) const;

  // The master key this keyring was opened with.
  const std::string& master_key_id() const { return master_key_id_; }

  // For tests: a keyring over `data_key` (kKeyBytes).
  static Keyring ForTest(std::string data_key) { return Keyring(std::move(data_key), "test"); }

 private:
  Keyring(std::string data_key, std::string master_key_id)
      : data_key_(std::move(data_key)), master_key_id_(std::move(master_key_id)) {}

  std::string data_key_;
  std::string master_key_id_;
};

}  // namespace hookrelay::secrets
