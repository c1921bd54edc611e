#pragma once

namespace CLI {
class App;
}

namespace hookrelay::cli {

// `hookrelay serve [--config F] [--listen HOST:PORT] [--data DIR | --store URL]
//                  [--allow-private-destinations]`
void AddServeCommand(CLI::App& app, int& exit_code);

}  // namespace hookrelay::cli
