#pragma once

#include <boost/json/object.hpp>
#include <string>

namespace CLI {
class App;
}

namespace hookrelay::cli {

// Registers `replay ID [--destination D] [--json]` (POST /api/v1/events/ID/replay; prints what
// was replayed) and `replay --status failed [--destination D] [--source S] [--since T]
// [--until T] [--rate R] [--no-wait] [--json]` (POST /api/v1/replays, then polls the job to its
// end with a progress bar on stderr when stderr is a terminal, plain progress lines otherwise,
// and prints the totals). `exit_code` is set after parsing: 0, 1 for an API error (past the
// replay window, unknown event, …) or a bulk job that ended cancelled or failed, 2 for bad usage.
void AddReplayCommand(CLI::App& app, int& exit_code);

// "[#########.....] 43% 860/2000 (2 failed) running" (without the bar when `bar` is false).
std::string RenderBulkReplayProgress(const boost::json::object& job, bool bar);
// "Bulk replay ID done: 1998 replayed, 2 failed, of 2000\n" (+ "error: …" for a failed job).
std::string RenderBulkReplayResult(const boost::json::object& job);

}  // namespace hookrelay::cli
