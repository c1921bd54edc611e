#pragma once

#include <string>
#include <string_view>

#include "cli/args.h"
#include "common/result.h"
#include "store/open_store.h"

namespace hookrelay::cli {

// The store a maintenance command works on, as `serve` would find it: --store URL, else
// --data DIR, else the config file's [store] (url, else dir), else ./hookrelay-data.
struct StoreFlags {
  std::string data;
  std::string store;
  std::string config;
};
void AddStoreFlags(Command& cmd, StoreFlags& flags);

struct ResolvedStore {
  store::StoreAddress address;
  bool migrate_auto = true;  // [store] migrate
};
Result<ResolvedStore> ResolveStore(const StoreFlags& flags);

// Prints "hookrelay <command>: <message>" to stderr; returns the exit code: 2 for what the user
// gave or the store's state refuses (kInvalidArgument, kFailedPrecondition: retrying will not
// help), 1 otherwise (I/O that may pass).
int ReportStoreError(std::string_view command, const Status& status);

}  // namespace hookrelay::cli
