#pragma once

#include <string>

#include "app/config.h"
#include "common/result.h"

namespace hookrelay::app {

// What the config file's catalog would be refused for once the store is open, said before
// anything is created: the objects as the catalog builds them, and each destination's address
// as the sender checks it (a literal loopback or private address without allow_private).
// "" when it would load. `serve` checks this before it creates anything.
std::string CheckConfigCatalog(const Config& config);

// Whether the listeners' TLS files ([server] tls, admin_tls) can be served: "" when they can (or
// there are none), else the message naming the setting and the file ("server.tls.cert
// /etc/hookrelay/cert.pem: cannot read: …"). Reads the files; check-config and a reload use it.
std::string CheckListenerTls(const ServerConfig& server);

// `hookrelay check-config FILE`: the file read and checked as `serve` would (parsing, the
// catalog, the master key file when one is named, the listeners' TLS files), nothing started or
// created. The error is serve's message; on success a line saying what the file defines.
Result<std::string> CheckConfigFile(const std::string& path);

}  // namespace hookrelay::app
