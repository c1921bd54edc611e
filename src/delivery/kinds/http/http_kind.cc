#include "delivery/kinds/http/http_kind.h"

#include "delivery/kinds/http/http_sender.h"

namespace hookrelay::delivery::http {

std::unique_ptr<RequestSender> MakeSender(const SenderSettings& settings, const Clock& clock) {
  HttpSender::Options options;
  options.allow_private_destinations = settings.allow_private_destinations;
  options.max_connections = settings.max_connections;
  options.threads = settings.threads;
  return std::make_unique<HttpSender>(options, clock);
}

}  // namespace hookrelay::delivery::http
