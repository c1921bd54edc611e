#include "delivery/kinds/redis/classify.h"

#include <hiredis/hiredis.h>

#include <cerrno>

namespace hookrelay::delivery::redis {

policy::BrokerAnswer ClassifyErrorReply(std::string_view reply) {
  const std::string_view code = reply.substr(0, reply.find(' '));
  for (std::string_view busy : {"LOADING", "OOM", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN",
                                "READONLY", "NOREPLICAS", "MISCONF"}) {
    if (code == busy) return policy::BrokerAnswer::kBusy;
  }
  // The one generic error that is about load, not about the request: a connection over maxclients.
  if (reply.starts_with("ERR max number of clients reached")) return policy::BrokerAnswer::kBusy;
  return policy::BrokerAnswer::kRefused;
}

policy::TransportError ClassifyContextError(int hiredis_err, int saved_errno) {
  switch (hiredis_err) {
    case REDIS_ERR_IO:
      switch (saved_errno) {
        case ECONNREFUSED: return policy::TransportError::kConnectionRefused;
        case ECONNRESET:
        case EPIPE: return policy::TransportError::kConnectionReset;
        case EAGAIN:
        case ETIMEDOUT:
        case EINPROGRESS: return policy::TransportError::kTimeout;
        default: return policy::TransportError::kOther;
      }
    case REDIS_ERR_EOF: return policy::TransportError::kConnectionReset;
    case REDIS_ERR_PROTOCOL: return policy::TransportError::kMalformedResponse;
    default: return policy::TransportError::kOther;
  }
}

}  // namespace hookrelay::delivery::redis
