#include "cli/store_flags.h"

#include <iostream>

#include "app/config.h"

namespace hookrelay::cli {

void AddStoreFlags(Command& cmd, StoreFlags& flags) {
  cmd.Add("--data", flags.data, "Data directory of the embedded store (default ./hookrelay-data)");
  cmd.Add("--store", flags.store, "A postgres:// store instead (docs/postgres.md)");
  cmd.Add("--config", flags.config, "Take the store from this config file's [store]");
}

Result<ResolvedStore> ResolveStore(const StoreFlags& flags) {
  app::Config config;
  if (!flags.config.empty()) {
    HR_ASSIGN_OR_RETURN(config, app::LoadConfigFile(flags.config));
  }
  ResolvedStore r;
  r.migrate_auto = config.store.migrate_auto;
  std::string address =
      config.store.postgres_url.empty() ? config.store.dir : config.store.postgres_url;
  if (!flags.data.empty()) address = flags.data;
  if (!flags.store.empty()) address = flags.store;
  HR_ASSIGN_OR_RETURN(r.address, store::ParseStoreAddress(address));
  return r;
}

int ReportStoreError(std::string_view command, const Status& status) {
  std::cerr << "hookrelay " << command << ": " << status.message() << std::endl;
  return status.code() == Status::Code::kInvalidArgument ||
                 status.code() == Status::Code::kFailedPrecondition
             ? 2
             : 1;
}

}  // namespace hookrelay::cli
