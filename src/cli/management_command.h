#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "cli/api_client.h"
#include "cli/args.h"
#include "common/result.h"

// What every management subcommand (events, sources, destinations, routes, replay) shares: the
// connection flags, --json, and how API errors reach the user (exit 1, the API's message).
//
// --server is the API's address, --url a destination's (only `destinations add|update` take it).
// A command line that would send the admin token anywhere but an API address is refused before
// any request (exit 2): see CheckApiAddress.

namespace hookrelay::cli {

struct ManagementOptions {
  std::string server;     // --server; see ResolveApiConfig
  std::string token;      // --token
  bool json = false;      // --json
  std::string stray_url;  // a hidden --url on commands that have no destination URL
};

// Adds --server, --token and --json to `cmd`; unless `has_destination_url`, also a hidden --url
// that only exists to refuse itself with a message naming --server.
void AddManagementOptions(Command cmd, ManagementOptions& options,
                          bool has_destination_url = false);

// A client for the resolved address and token. Throws UsageError (exit 2, before any
// request) for an API address with a path, query or fragment, for a stray --url, and when no
// token is set.
ApiClient MakeClient(const ManagementOptions& options);

// Prints "hookrelay <command>: <message>" to stderr and returns the exit code for an API or
// transport error (1).
int ReportApiError(std::string_view command, const Status& status);

// Prints `v` as one line of JSON.
void PrintJson(const boost::json::value& v);

// Prints an API answer that must be one object: as JSON with `as_json`, else through `render`.
// Returns the exit code: 0, or 1 with the API's message on an error.
int PrintApiObject(std::string_view command, const Result<boost::json::value>& answer, bool as_json,
                   const std::function<std::string(const boost::json::object&)>& render);
// The same for a list answer ({"items": [...], …}): `render` gets the items.
int PrintApiList(std::string_view command, const Result<boost::json::value>& answer, bool as_json,
                 const std::function<std::string(const boost::json::array&)>& render);

}  // namespace hookrelay::cli
