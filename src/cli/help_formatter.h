#pragma once

#include <cstddef>
#include <memory>

namespace CLI {
class Formatter;
}

namespace hookrelay::cli {

// A help formatter whose option and subcommand lines fit in `width` columns: descriptions are
// wrapped at spaces into the right-hand column (CLI11 2.1 cannot wrap them itself).
std::shared_ptr<CLI::Formatter> MakeHelpFormatter(size_t width);

}  // namespace hookrelay::cli
