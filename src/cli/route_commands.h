#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "common/result.h"

namespace hookrelay::cli {

// Registers the commands that write or try routes through the API:
//   routes add SOURCE DESTINATION [--id ID] [--types T…] [--filter JSON|@FILE]
//                                                          POST /api/v1/routes
//   routes update ID [--types T… | --all-types] [--filter JSON|@FILE | --no-filter]
//                                                          PATCH /api/v1/routes/ID
//   routes test SOURCE [--types T…] [--filter JSON|@FILE] [--event ID | --last N]
//                                                          POST /api/v1/routes/test
// `exit_code` is set after parsing.
void AddRouteCommands(Command routes, int& exit_code);

// The flags of a route's rule.
struct RouteRuleFlags {
  std::vector<std::string> types;  // each may list several, comma-separated
  std::string filter;              // JSON, or @FILE (@- standard input)
  bool all_types = false;          // update: drop the types
  bool no_filter = false;          // update: drop the filter
};

// Adds "types" (an array) and "filter" (an object) to `body` from the flags: only those given
// (update: null for --all-types / --no-filter, which a merge patch reads as "remove").
// InvalidArgument naming the flag: --filter not JSON, or not an object.
Status AddRuleFields(const RouteRuleFlags& flags, boost::json::object& body);

}  // namespace hookrelay::cli
