#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "cli/api_client.h"
#include "common/result.h"

namespace CLI {
class App;
}

// What every management subcommand (events, sources, destinations, routes) shares: the
// connection flags, --json, and how API errors reach the user (exit 1, the API's message).

namespace hookrelay::cli {

struct ManagementOptions {
  std::string url;    // --url; see ResolveApiConfig
  std::string token;  // --token
  bool json = false;  // --json
};

// Adds --url, --token and --json to `cmd`.
void AddManagementOptions(CLI::App* cmd, ManagementOptions& options);

// A client for the resolved URL and token.
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

}  // namespace hookrelay::cli
