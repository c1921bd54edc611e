#include <openssl/evp.h>

#include <chrono>
#include <string>

#include "common/crypto.h"
#include "delivery/sender.h"

namespace hookrelay::delivery {

std::vector<std::pair<std::string, std::string>> StandardWebhookHeaders(
    const std::string& event_id, TimePoint now, const std::string& body,
    const std::optional<std::string>& signing_key) {
  // Seconds, rounded down (also for instants before the epoch).
  std::string timestamp =
      std::to_string(std::chrono::floor<std::chrono::seconds>(now).time_since_epoch().count());
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(3);
  headers.emplace_back("webhook-id", event_id);
  if (!signing_key) {
    headers.emplace_back("webhook-timestamp", std::move(timestamp));
    return headers;
  }
  // HMAC-SHA256(key, id.timestamp.body), signed without copying the body.
  unsigned char mac[32];
  HmacSha256Parts(*signing_key, {event_id, ".", timestamp, ".", body}, mac);
  unsigned char base64[4 * ((sizeof mac + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(base64, mac, sizeof mac);
  std::string signature;
  signature.reserve(3 + static_cast<size_t>(n));
  signature.append("v1,").append(reinterpret_cast<const char*>(base64), static_cast<size_t>(n));
  headers.emplace_back("webhook-timestamp", std::move(timestamp));
  headers.emplace_back("webhook-signature", std::move(signature));
  return headers;
}

}  // namespace hookrelay::delivery
