#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hookrelay::policy {

// Why an attempt got no HTTP response.
enum class TransportError {
  kNone,               // a response was received; see status_code
  kTimeout,            // the attempt's timeout expired
  kConnectionRefused,  // nothing listening
  kConnectionReset,    // the peer closed or reset the connection mid-request
  kDns,                // the name did not resolve
  kTls,                // TLS handshake or certificate verification failed
  kPrivateAddress,     // SSRF guard: resolved to a loopback/private address that is not allowed
  kResponseTooLarge,   // the response's headers exceeded the client's limit (300 KB in all)
  kMalformedResponse,  // not HTTP: a garbage status line, a header line without a colon, …
  kOther,              // any other transport failure
};

std::string_view TransportErrorName(TransportError e);  // "timeout", "connection_refused", …

// What a message broker answered (a destination kind that is not HTTP: redis; amqp and nats
// next), in place of an HTTP status. A broker's answer is not a status code, and mapping it onto
// one ("200", "503") would show users a status no server sent; the three classes below are all
// the engine needs (delivered, retry with the policy, final), and the broker's own words go in
// AttemptOutcome::broker_reply. A broker that could not be reached at all is a TransportError, as
// for HTTP (refused, reset, timeout, DNS).
enum class BrokerAnswer {
  kNone,      // not a broker's answer: status_code (or the transport error) says what happened
  kAccepted,  // the broker acknowledged the message (Redis: XADD returned the entry's id)
  kBusy,      // back-pressure or not ready: it may take it later (Redis: OOM, LOADING, BUSY, …)
  kRefused,  // a permanent error: it will not take it as configured (Redis: WRONGTYPE, NOAUTH, …)
};

std::string_view BrokerAnswerName(BrokerAnswer a);  // "none", "accepted", "busy", "refused"

// What one attempt produced. A transport error after the status line arrived (a body that
// never finished) keeps that status_code beside the error; the error decides the class.
struct AttemptOutcome {
  int status_code = 0;  // the final HTTP status; 0 when none arrived (1xx are not final)
  TransportError error = TransportError::kNone;
  std::optional<std::string> retry_after;  // the raw Retry-After header, if any
  // With a transport error and no final status: interim 1xx responses (100 Continue) did arrive.
  bool only_interim = false;
  // With a transport error and no status line at all: bytes of a response that did arrive (a
  // status line cut short or trickled); 0 when the endpoint sent nothing.
  uint64_t bytes_received = 0;
  // A broker kind's answer (error is then kNone and status_code 0), and its own words: the entry
  // id it acknowledged with, or its error reply ("WRONGTYPE Operation against a key …").
  BrokerAnswer broker = BrokerAnswer::kNone;
  std::string broker_reply;
};

enum class OutcomeClass {
  kSuccess,    // 2xx, a broker's kAccepted
  kRetryable,  // 408, 429, 5xx, timeout, connection refused/reset, DNS, TLS, response too
               // large, malformed response, other transport, a broker's kBusy
  kFinal,      // every other status (1xx, 3xx — redirects are not followed — other 4xx,
               // out-of-range codes), a refused private address, a broker's kRefused
};

std::string_view OutcomeClassName(OutcomeClass c);  // "success", "retryable", "final"

struct Classification {
  OutcomeClass cls;
  // A sentence for people, naming the status and what to do:
  // "404 Not Found is not retried: the endpoint says it does not exist; fix the URL, then replay"
  std::string reason;
};

Classification Classify(const AttemptOutcome& outcome);

// The standard reason phrase ("Not Found"), or "" for unregistered codes.
std::string_view StatusText(int status_code);

}  // namespace hookrelay::policy
