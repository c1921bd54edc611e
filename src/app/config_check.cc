#include "app/config_check.h"

#include "catalog/catalog_plan.h"
#include "common/file_text.h"
#include "delivery/ssrf.h"
#include "http/server.h"
#include "secrets/master_key.h"

namespace hookrelay::app {

std::string CheckConfigCatalog(const Config& config) {
  if (auto built = catalog::BuildCatalog(config.catalog_objects); !built.ok()) {
    return "catalog: " + built.status().message();
  }
  const bool allow_private = config.server.allow_private_destinations;
  for (const auto& [name, d] : config.catalog.destinations) {
    if (Status st = delivery::CheckDestinationAddress(d, allow_private); !st.ok()) {
      return config.DestinationLocation(name, st.field()) + "destination \"" + name +
             "\": " + (st.field().empty() ? "" : st.field() + ": ") + st.message() +
             std::string(delivery::kConfigPrivateAddressHint);
    }
  }
  return "";
}

std::string CheckListenerTls(const ServerConfig& server) {
  // The messages name the file as "tls.cert /path": "server." or "server.admin_" before them
  // names the setting.
  if (server.tls) {
    if (Status st = http::CheckTlsFiles(*server.tls); !st.ok()) {
      return "server." + st.message();
    }
  }
  if (server.admin_tls) {
    if (Status st = http::CheckTlsFiles(*server.admin_tls); !st.ok()) {
      return "server.admin_" + st.message();
    }
  }
  return "";
}

Result<std::string> CheckConfigFile(const std::string& path) {
  HR_ASSIGN_OR_RETURN(Config config, LoadConfigFile(path));
  if (std::string error = CheckConfigCatalog(config); !error.empty()) {
    return Status::InvalidArgument(error);
  }
  if (std::string error = CheckListenerTls(config.server); !error.empty()) {
    return Status::InvalidArgument(error);
  }
  if (!config.store.master_key_file.empty()) {
    HR_ASSIGN_OR_RETURN(const std::string text, ReadFileText(config.store.master_key_file));
    HR_RETURN_IF_ERROR(secrets::ParseMasterKey(text, config.store.master_key_file).status());
  }
  auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  return path + ": OK (" + count(config.catalog.sources.size(), "source", "sources") + ", " +
         count(config.catalog.destinations.size(), "destination", "destinations") + ", " +
         count(config.catalog.routes.size(), "route", "routes") + "; store " +
         (config.store.postgres_url.empty() ? config.store.dir : "PostgreSQL") + ")";
}

}  // namespace hookrelay::app
