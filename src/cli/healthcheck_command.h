#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay healthcheck [URL] [--timeout S]`: for container and service health checks. Exit 0
// when URL (default http://127.0.0.1:8080/healthz; a bare address gets /healthz) answers 2xx in
// time, else 1 with the reason on stderr. No token is sent.
void AddHealthcheckCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
