#include "cli/management_command.h"

#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/args.h"
#include "http/json_text.h"

namespace hookrelay::cli {

void AddManagementOptions(Command cmd, ManagementOptions& options, bool has_destination_url) {
  cmd.Add("--server", options.server,
          std::string("The hookrelay API's address, http://HOST:PORT (default: "
                      "HOOKRELAY_URL, else ") +
              kDefaultApiUrl + ")");
  cmd.Add("--token", options.token,
          "API token: a named one (hookrelay tokens) or the admin one (default: HOOKRELAY_TOKEN, "
          "or HOOKRELAY_ADMIN_TOKEN)");
  cmd.Flag("--json", options.json, "Print the API's JSON instead of a table");
  if (!has_destination_url) cmd.Add("--url", options.stray_url).Hidden();
}

ApiClient MakeClient(const ManagementOptions& options) {
  if (!options.stray_url.empty()) {
    throw UsageError(
        "--url is a destination's URL (in `destinations add` and `destinations update`); this "
        "command takes none. The API's address is --server (or HOOKRELAY_URL)");
  }
  const char* env = std::getenv("HOOKRELAY_URL");
  const bool from_flag = !options.server.empty();
  if (from_flag || (env && *env)) {
    Status s = CheckApiAddress(from_flag ? std::string_view(options.server) : std::string_view(env),
                               from_flag ? "--server" : "HOOKRELAY_URL");
    if (!s.ok()) throw UsageError(s.message());
  }
  ApiConfig config = ResolveApiConfig(options.server, options.token);
  if (Status s = CheckToken(config.token); !s.ok()) throw UsageError(s.message());
  return ApiClient(std::move(config));
}

int ReportApiError(std::string_view command, const Status& status) {
  std::cerr << "hookrelay " << command << ": " << status.message() << "\n";
  return 1;
}

void PrintJson(const boost::json::value& v) { std::cout << http::SerializeJson(v) << "\n"; }

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

int PrintApiList(std::string_view command, const Result<boost::json::value>& answer, bool as_json,
                 const std::function<std::string(const boost::json::array&)>& render) {
  if (!answer.ok()) return ReportApiError(command, answer.status());
  const boost::json::value* items =
      answer->is_object() ? answer->get_object().if_contains("items") : nullptr;
  if (!items || !items->is_array()) {
    return ReportApiError(command, Status::Internal("the API answered without an \"items\" list"));
  }
  if (as_json) {
    PrintJson(*answer);
  } else {
    std::cout << render(items->get_array());
  }
  return 0;
}

}  // namespace hookrelay::cli
