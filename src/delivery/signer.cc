#include "delivery/signer.h"

#include <chrono>
#include <string>

#include "common/standard_webhooks.h"

namespace hookrelay::delivery {

std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(
    const std::string& event_id, TimePoint now, const std::string& body,
    const std::vector<std::string>& signing_keys) {
  // Seconds, rounded down (also for instants before the epoch).
  std::string timestamp =
      std::to_string(std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count());
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(3);
  headers.emplace_back("webhook-id", event_id);
  if (signing_keys.empty()) {
    headers.emplace_back("webhook-timestamp", std::move(timestamp));
    return headers;
  }
  std::string signature;
  for (const std::string& key : signing_keys) {
    if (!signature.empty()) signature += ' ';
    signature += "v1,";
    signature += standard_webhooks::Signature(key, event_id, timestamp, body);
  }
  headers.emplace_back("webhook-timestamp", std::move(timestamp));
  headers.emplace_back("webhook-signature", std::move(signature));
  return headers;
}

}  // namespace hookrelay::delivery
