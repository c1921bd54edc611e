// The master keys that open the store's data key (docs/secrets.md): GET, POST and DELETE
// /api/v1/keys, a master key's rotation without downtime.

#include <boost/json.hpp>

#include "api/api_handler.h"
#include "api/handler_util.h"
#include "api/request_params.h"
#include "common/time_format.h"
#include "http/json_text.h"

namespace hookrelay::api {

namespace json = boost::json;

namespace {

json::object KeyToJson(const store::WrappedDataKey& k, const std::string& in_use) {
  return {{"id", k.master_key_id},
          {"created_at", FormatRfc3339(k.created_at)},
          {"this_node", k.master_key_id == in_use}};
}

}  // namespace

http::Response ApiHandler::ListKeys() const {
  if (!controls_.keyring) return NoControl("managing master keys");
  auto keys = store_.ListDataKeys();
  if (!keys.ok()) return FromStatus(keys.status());
  json::array items;
  for (const store::WrappedDataKey& k : *keys) {
    items.push_back(KeyToJson(k, controls_.keyring->master_key_id()));
  }
  return Json({{"items", std::move(items)}, {"next_cursor", nullptr}});
}

http::Response ApiHandler::AddKey(const http::Request& request) const {
  if (!controls_.keyring) return NoControl("managing master keys");
  auto text = ParseAddKeyBody(request.body);
  if (!text.ok()) return FromStatus(text.status());
  auto key = secrets::ParseMasterKey(*text, "master_key");
  if (!key.ok()) return FromStatus(Status::InvalidArgument(key.status().message(), "master_key"));
  auto added = controls_.keyring->AddMasterKey(store_, *key, clock_);
  if (!added.ok()) return FromStatus(added.status());
  auto keys = store_.ListDataKeys();
  if (!keys.ok()) return FromStatus(keys.status());
  for (const store::WrappedDataKey& k : *keys) {
    if (k.master_key_id != key->id) continue;
    if (*added) {
      if (Status s = Audit(request, "key_add", k.master_key_id, 1, ""); !s.ok()) {
        return FromStatus(s);
      }
    }
    http::Response r = Json(KeyToJson(k, controls_.keyring->master_key_id()));
    r.status = *added ? 201 : 200;
    return r;
  }
  return FromStatus(Status::Internal("the added key is not in the store"));
}

http::Response ApiHandler::RetireKey(const http::Request& request, const std::string& id) const {
  if (!controls_.keyring) return NoControl("managing master keys");
  if (Status s = ParseEmptyBody(request.body); !s.ok()) return FromStatus(s);
  if (id == controls_.keyring->master_key_id()) {
    // It would not start again with the key it runs with.
    return FromStatus(Status::FailedPrecondition(
        "this node runs with master key " + id +
        ": restart it with the new key first (or retire it through a node that runs with the "
        "new one)"));
  }
  auto deleted = store_.DeleteDataKey(id);
  if (!deleted.ok()) return FromStatus(deleted.status());
  if (!*deleted) return NotFound("master key", id);
  if (Status s = Audit(request, "key_retire", id, 1, ""); !s.ok()) return FromStatus(s);
  return Json({{"id", id}, {"retired", true}});
}

}  // namespace hookrelay::api
