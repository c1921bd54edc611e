#include <chrono>
#include <string>

#include "common/crypto.h"
#include "delivery/sender.h"

namespace hookrelay::delivery {

std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(
    const std::string& event_id, TimePoint now, const std::string& body,
    const std::optional<std::string>& signing_key) {
  // Seconds, rounded down (also for instants before the epoch).
  const std::string timestamp =
      std::to_string(std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count());
  std::vector<std::pair<std::string, std::string>> headers = {{"webhook-id", event_id},
                                                              {"webhook-timestamp", timestamp}};
  if (signing_key) {
    std::string signed_content;
    signed_content.reserve(event_id.size() + timestamp.size() + body.size() + 2);
    signed_content.append(event_id).append(".").append(timestamp).append(".").append(body);
    headers.emplace_back("webhook-signature",
                         "v1," + Base64Encode(HmacSha256(*signing_key, signed_content)));
  }
  return headers;
}

}  // namespace hookrelay::delivery
