#include "secrets/encrypting_store.h"

#include <utility>

namespace hookrelay::secrets {

namespace {

// An encrypted spec opens only as the spec of that kind and name.
std::string Context(const store::CatalogObject& o) {
  return "catalog\n" + std::string(store::CatalogKindName(o.kind)) + "\n" + o.name;
}

}  // namespace

EncryptingStore::EncryptingStore(std::unique_ptr<store::Store> inner, Keyring keyring)
    : StoreWrapper(inner.get()), inner_(std::move(inner)), keyring_(std::move(keyring)) {}

Result<std::vector<store::CatalogObject>> EncryptingStore::ListCatalog() {
  HR_ASSIGN_OR_RETURN(std::vector<store::CatalogObject> objects, inner_->ListCatalog());
  for (store::CatalogObject& o : objects) {
    if (!Keyring::IsEncrypted(o.spec)) continue;
    Result<std::string> spec = keyring_.Decrypt(o.spec, Context(o));
    if (!spec.ok()) {
      return Status::Internal("the stored " + std::string(store::CatalogKindName(o.kind)) + " \"" +
                              o.name + "\" does not decrypt: " + spec.status().message());
    }
    o.spec = std::move(*spec);
  }
  return objects;
}

Status EncryptingStore::ApplyCatalogChange(const store::CatalogChange& change) {
  store::CatalogChange encrypted = change;
  for (store::CatalogObject& o : encrypted.put) {
    if (!o.spec.empty()) o.spec = keyring_.Encrypt(o.spec, Context(o));
  }
  return inner_->ApplyCatalogChange(encrypted);
}

Result<int> EncryptingStore::EncryptExisting() {
  HR_ASSIGN_OR_RETURN(const int64_t version, inner_->CatalogVersion());
  HR_ASSIGN_OR_RETURN(std::vector<store::CatalogObject> objects, inner_->ListCatalog());
  store::CatalogChange change;
  for (store::CatalogObject& o : objects) {
    if (!Keyring::IsEncrypted(o.spec)) change.put.push_back(std::move(o));
  }
  if (change.put.empty()) return 0;
  // Another node's change meanwhile fails this one (kUnavailable); the caller tries again.
  change.if_version = version;
  HR_RETURN_IF_ERROR(ApplyCatalogChange(change));
  HR_RETURN_IF_ERROR(inner_->EraseOldCopies());
  return static_cast<int>(change.put.size());
}

}  // namespace hookrelay::secrets
