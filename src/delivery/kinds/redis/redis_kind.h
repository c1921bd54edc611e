#pragma once

// The Redis Streams destination kind: each delivery is one XADD to the destination's stream over
// hiredis (RedisSender, redis_sender.h); its outcomes are mapped by classify.h. Registered in
// kinds/registry.cc.

#include <memory>
#include <string_view>

#include "common/clock.h"
#include "delivery/kinds/registry.h"
#include "delivery/request_sender.h"
#include "model/destination_kind.h"

namespace hookrelay::delivery::redis {

inline constexpr std::string_view kKindName = model::kRedisKind;

// The kind's factory (DestinationKind::make): a RedisSender with the node's settings.
std::unique_ptr<RequestSender> MakeSender(const SenderSettings& settings, const Clock& clock);

}  // namespace hookrelay::delivery::redis
