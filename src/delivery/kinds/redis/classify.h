#pragma once

// How the Redis kind's outcomes map onto the engine's three classes (pure: no I/O, no hiredis
// call). The engine applies the destination's retry policy, breaker and adaptive limit to the
// result as to an HTTP attempt's (docs/delivery.md, "Redis Streams"):
//   XADD returned an entry id                     → BrokerAnswer::kAccepted (delivered)
//   no reply: refused, reset, EOF, timeout, …     → a TransportError (retryable)
//   an error reply saying "not now" (LOADING, OOM, BUSY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN,
//     READONLY, NOREPLICAS, MISCONF, "ERR max number of clients reached")
//                                                 → BrokerAnswer::kBusy (retryable; it also
//                                                   halves the adaptive limit, as a 503 does)
//   any other error reply (NOAUTH, WRONGPASS, NOPERM, WRONGTYPE, ERR …, and codes this list
//     does not know)                              → BrokerAnswer::kRefused (final, with Redis's
//                                                   words as the reason)
// An unknown code is final rather than retried: a retry of an error Redis did not say is
// transient would only repeat it until the attempts run out, and the reason names the code.

#include <string_view>

#include "policy/outcome.h"

namespace hookrelay::delivery::redis {

// The class of an error reply, by its first word (Redis's error code: "WRONGTYPE Operation
// against a key holding the wrong kind of value" is WRONGTYPE). Never kAccepted or kNone.
policy::BrokerAnswer ClassifyErrorReply(std::string_view reply);

// A command or connection that got no reply: hiredis's context error (`hiredis_err`: REDIS_ERR_IO
// with the errno it saw, REDIS_ERR_EOF, REDIS_ERR_PROTOCOL, REDIS_ERR_OOM, REDIS_ERR_OTHER) as
// the attempt's transport error. `saved_errno` matters for REDIS_ERR_IO only: ECONNREFUSED is
// kConnectionRefused, ECONNRESET/EPIPE kConnectionReset, EAGAIN/ETIMEDOUT/EINPROGRESS (a
// connect or read that timed out) kTimeout. A closed connection (REDIS_ERR_EOF) is
// kConnectionReset, a reply that is not RESP kMalformedResponse, the rest kOther.
policy::TransportError ClassifyContextError(int hiredis_err, int saved_errno);

}  // namespace hookrelay::delivery::redis
