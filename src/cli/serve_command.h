#pragma once

#include "cli/args.h"

namespace hookrelay::cli {

// `hookrelay serve [--config F] [--listen HOST:PORT] [--data DIR | --store URL]
//                  [--allow-private-destinations]`
void AddServeCommand(Command app, int& exit_code);

}  // namespace hookrelay::cli
