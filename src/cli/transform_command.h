#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// hookrelay transform test (--event ID [--destination NAME] | --request JSON|@FILE)
//                           [--script FILE.js] [--cpu 50ms] [--memory 16MiB]
// POST /api/v1/transforms/test: runs a transform once and prints the request it makes (or that
// it skips the delivery), the CPU time and memory it used, or its error with the line; nothing
// is sent. Without --script, the transform the delivery to --destination would run (a preview).
// Exit 0 when it ran, 1 when the script failed or the API refused, 2 for usage errors.
void AddTransformCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
