#pragma once

#include "app/config.h"
#include "app/serve.h"
#include "common/result.h"

namespace hookrelay::app {

// Puts `serve`'s flags over the config file's values (flags win): --listen, --admin-listen,
// --data, --store, --allow-private-destinations, --log-level, --log-format. An empty or bad value
// is InvalidArgument whose message names the flag and says what to give. At start and at every
// reload (a flag keeps winning over the file read again).
Status ApplyServeFlags(const ServeOptions& options, Config& config);

}  // namespace hookrelay::app
