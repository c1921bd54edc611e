#include "cli/replay_command.h"

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include <iostream>
#include <memory>

#include "cli/management_command.h"
#include "cli/render.h"

namespace hookrelay::cli {

namespace json = boost::json;

void AddReplayCommand(CLI::App& app, int& exit_code) {
  auto id = std::make_shared<std::string>();
  auto destination = std::make_shared<std::string>();
  auto common = std::make_shared<ManagementOptions>();
  CLI::App* replay = app.add_subcommand(
      "replay", "Deliver an event again (a new delivery chain, the same webhook-id)");
  replay->add_option("id", *id, "Event id")->required();
  replay->add_option("--destination", *destination,
                     "Only to this destination (one the event was routed to)");
  AddManagementOptions(replay, *common);
  replay->callback([id, destination, common, &exit_code] {
    json::object body;
    if (!destination->empty()) body["destination"] = *destination;
    ApiClient client = MakeClient(*common);
    Result<json::value> result =
        client.Post("/api/v1/events/" + PercentEncode(*id) + "/replay", body);
    if (!result.ok()) {
      exit_code = ReportApiError("replay", result.status());
      return;
    }
    if (!result->is_object()) {
      exit_code = ReportApiError("replay", Status::Internal("the API answered with a non-object"));
      return;
    }
    if (common->json) {
      PrintJson(*result);
    } else {
      std::cout << RenderReplayResult(result->get_object());
    }
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
