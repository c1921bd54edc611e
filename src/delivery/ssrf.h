#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/destination.h"

// The SSRF rules: which addresses a destination may not reach unless it allows private ones, and
// what is said when one is refused. The HTTP sender applies them at connect time
// (kinds/http/http_sender.h); the catalog, the config and the CLI check a URL's literal host with
// them before anything is sent.
namespace hookrelay::delivery {

// True for addresses the SSRF guard refuses by default (loopback, private,
// link-local, CGNAT, multicast, broadcast, unspecified); IPv4-mapped IPv6 addresses
// are judged by their IPv4 part. `address` is a numeric IPv4 or IPv6 literal; anything that does
// not parse is treated as private (refused).
bool IsPrivateAddress(const std::string& address);

// True when a URL's host (brackets and zone removed) is refused without allow_private before any
// name is resolved: a literal address IsPrivateAddress refuses, or localhost / *.localhost (any
// case). A name that merely resolves to such an address is caught at connect time instead.
bool IsRefusedLiteralHost(std::string_view host);

// The end of every message refusing a loopback/private destination, at delivery and at creation.
inline constexpr std::string_view kPrivateAddressRefusal =
    "loopback/private addresses are not allowed for this destination";
// At delivery, where the refusal is the server's: both switches that lift it.
inline constexpr std::string_view kPrivateAddressRule =
    "loopback/private addresses are not allowed for this destination (allow_private or "
    "--allow-private-destinations)";
// What lifts a refusal at creation, named on the surface it is said on: the config file, the
// API (the dashboard and the CLI say their own: the CLI replaces kApiPrivateAddressHint).
inline constexpr std::string_view kConfigPrivateAddressHint =
    " (set allow_private = true on the destination, or start serve with "
    "--allow-private-destinations)";
inline constexpr std::string_view kApiPrivateAddressHint =
    " (set \"allow_private\": true on the destination)";

// What the sender would refuse before resolving anything, said when a destination is created,
// changed or loaded from the config: kInvalidArgument (field "url", the message ending with
// kPrivateAddressRefusal and no hint: the caller adds its surface's) when the URL's host
// IsRefusedLiteralHost and neither `destination.allow_private` nor
// `allow_private_destinations` (the server's flag) is set; else OK. A name that only resolves to
// such an address is still caught at connect time.
Status CheckDestinationAddress(const model::Destination& destination,
                               bool allow_private_destinations);

}  // namespace hookrelay::delivery
