#pragma once

#include <memory>
#include <string>

#include "secrets/keyring.h"
#include "store/store.h"
#include "store/store_wrapper.h"

namespace hookrelay::secrets {

// The store with the catalog's objects encrypted at rest (docs/secrets.md): every object's spec
// (the JSON that holds its secrets: signing and verification secrets, credentials, client keys,
// header values) is written encrypted under the keyring's data key, bound to its kind and name,
// and decrypted when read. Names, kinds and times stay readable. Everything else is forwarded.
class EncryptingStore final : public store::StoreWrapper {
 public:
  EncryptingStore(std::unique_ptr<store::Store> inner, Keyring keyring);

  // A spec that does not decrypt is an error naming the object (never a wrong plaintext). One
  // still in plain text (written before encryption, by an older version) is read as it is.
  Result<std::vector<store::CatalogObject>> ListCatalog() override;
  Status ApplyCatalogChange(const store::CatalogChange& change) override;

  // The upgrade from a store without encryption: writes every object still in plain text again,
  // encrypted, in one change (no audit entry; the catalog's version goes up), then lets the
  // store erase the old copies (KeyStore::EraseOldCopies). Returns how many it encrypted (0: no
  // change, nothing erased).
  Result<int> EncryptExisting();

  const Keyring& keyring() const { return keyring_; }

 private:
  std::unique_ptr<store::Store> inner_;
  Keyring keyring_;
};

}  // namespace hookrelay::secrets
