#include "delivery/kinds/redis/redis_kind.h"

#include "delivery/kinds/redis/redis_sender.h"

namespace hookrelay::delivery::redis {

namespace {

// Workers of the Redis sender, each one blocking command at a time: enough for a local Redis to
// take tens of thousands of entries a second (an XADD is well under a millisecond), few enough
// that an idle node keeps eight sleeping threads. The node's `threads` setting sizes the HTTP
// sender's event loops, which carry many requests each, so it is not a measure for these.
constexpr int kThreads = 8;

}  // namespace

std::unique_ptr<RequestSender> MakeSender(const SenderSettings& settings, const Clock& clock) {
  RedisSender::Options options;
  options.allow_private_destinations = settings.allow_private_destinations;
  options.threads = kThreads;
  return std::make_unique<RedisSender>(options, clock);
}

}  // namespace hookrelay::delivery::redis
