#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

// Standard Webhooks (standardwebhooks.com), the parts both directions share: hookrelay signs
// what it delivers with it (delivery/signer.h) and verifies sources that use it
// (ingest/verify.h), with one decoding of secrets and one signature.
namespace hookrelay::standard_webhooks {

inline constexpr std::string_view kSecretPrefix = "whsec_";

// The HMAC key of a "whsec_<base64>" secret: the decoded bytes, 16 to 64 of them; else
// kInvalidArgument saying what a secret must be (no field: the caller names its own).
Result<std::string> DecodeSecret(std::string_view secret);

// The signature of one message: base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")), computed
// without copying the body. The header carries it as "v1,<signature>" (several separated by
// spaces while a secret rotates).
std::string Signature(std::string_view key, std::string_view id, std::string_view timestamp,
                      std::string_view body);

}  // namespace hookrelay::standard_webhooks
