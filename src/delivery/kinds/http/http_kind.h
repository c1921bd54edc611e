#pragma once

// The HTTP destination kind: POSTs over libcurl (HttpSender, http_sender.h). Registered in
// kinds/registry.cc.

#include <memory>
#include <string_view>

#include "common/clock.h"
#include "delivery/kinds/registry.h"
#include "delivery/request_sender.h"

namespace hookrelay::delivery::http {

inline constexpr std::string_view kKindName = "http";

// The kind's factory (DestinationKind::make): an HttpSender with the node's settings.
std::unique_ptr<RequestSender> MakeSender(const SenderSettings& settings, const Clock& clock);

}  // namespace hookrelay::delivery::http
