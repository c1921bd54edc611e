#include "cli/management_command.h"

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>

namespace hookrelay::cli {

void AddManagementOptions(CLI::App* cmd, ManagementOptions& options) {
  cmd->add_option(
      "--url", options.url,
      std::string("API base URL (default: HOOKRELAY_URL, else ") + kDefaultApiUrl + ")");
  cmd->add_option("--token", options.token, "Admin bearer token (default: HOOKRELAY_TOKEN)");
  cmd->add_flag("--json", options.json, "Print the API's JSON instead of a table");
}

ApiClient MakeClient(const ManagementOptions& options) {
  return ApiClient(ResolveApiConfig(options.url, options.token));
}

int ReportApiError(std::string_view command, const Status& status) {
  std::cerr << "hookrelay " << command << ": " << status.message() << "\n";
  return 1;
}

void PrintJson(const boost::json::value& v) { std::cout << boost::json::serialize(v) << "\n"; }

}  // namespace hookrelay::cli
