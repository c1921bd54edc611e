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

int PrintApiObject(std::string_view command, const Result<boost::json::value>& answer, bool as_json,
                   const std::function<std::string(const boost::json::object&)>& render) {
  if (!answer.ok()) return ReportApiError(command, answer.status());
  if (!answer->is_object()) {
    return ReportApiError(command, Status::Internal("the API answered with a non-object"));
  }
  if (as_json) {
    PrintJson(*answer);
  } else {
    std::cout << render(answer->get_object());
  }
  return 0;
}

}  // namespace hookrelay::cli
