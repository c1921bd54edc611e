#include "cli/healthcheck_command.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "cli/api_client.h"

namespace hookrelay::cli {

void AddHealthcheckCommand(Command app, int& exit_code) {
  auto url = std::make_shared<std::string>("http://127.0.0.1:8080/healthz");
  auto timeout_s = std::make_shared<int>(5);
  Command cmd = app.Subcommand(
      "healthcheck",
      "Exit 0 when the server answers its health check, 1 otherwise (for containers, systemd)");
  cmd.Add("url", *url,
          "What to ask (default http://127.0.0.1:8080/healthz; /readyz also checks the store)");
  cmd.Add("--timeout", *timeout_s, "Seconds to wait at most (default 5)");
  cmd.Callback([url, timeout_s, &exit_code] {
    // "http://host:port/path": the API client takes the address and the path apart.
    const size_t scheme = url->find("://");
    const size_t slash = url->find('/', scheme == std::string::npos ? 0 : scheme + 3);
    const std::string base = slash == std::string::npos ? *url : url->substr(0, slash);
    const std::string path = slash == std::string::npos ? "/healthz" : url->substr(slash);
    if (scheme == std::string::npos || *timeout_s < 1) {
      std::cerr << "hookrelay healthcheck: "
                << (*timeout_s < 1 ? "--timeout: must be at least 1 (seconds)"
                                   : "url: expects http:// or https://, e.g. "
                                     "http://127.0.0.1:8080/healthz")
                << std::endl;
      exit_code = 2;
      return;
    }
    ApiClient client(ApiConfig{.url = base, .token = "", .unreachable_hint = ""},
                     std::chrono::seconds(*timeout_s));
    Result<boost::json::value> answer = client.Get(path);
    if (!answer.ok()) {
      std::cerr << "hookrelay healthcheck: " << answer.status().message() << std::endl;
      exit_code = 1;
      return;
    }
    std::cout << "ok: " << *url << std::endl;
    exit_code = 0;
  });
}

}  // namespace hookrelay::cli
