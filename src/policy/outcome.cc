#include "policy/outcome.h"

#include <string>

namespace hookrelay::policy {
namespace {

// "404 Not Found", or just "499" for an unregistered code.
std::string Label(int code) {
  std::string out = std::to_string(code);
  std::string_view text = StatusText(code);
  if (!text.empty()) {
    out += ' ';
    out += text;
  }
  return out;
}

Classification Final(int code, std::string_view why) {
  return {OutcomeClass::kFinal, Label(code) + " is not retried: " + std::string(why)};
}

// Retryable reasons describe what happened without promising a retry: the same sentence ends
// up in "gave up after 5 of 5 attempts: …".
Classification Retryable(int code, std::string_view why) {
  return {OutcomeClass::kRetryable, Label(code) + ": " + std::string(why)};
}

Classification ClassifyStatus(int code) {
  if (code < 100 || code > 599) {
    return {OutcomeClass::kFinal,
            "HTTP status " + std::to_string(code) +
                " is not retried: it is outside the valid range 100-599; fix the endpoint, "
                "then replay"};
  }
  if (code >= 200 && code <= 299) return {OutcomeClass::kSuccess, Label(code) + ": delivered"};
  if (code < 200) {
    return Final(code,
                 "the endpoint answered with an informational status instead of a final "
                 "response; fix the endpoint, then replay");
  }
  if (code < 400) {
    return Final(code,
                 "redirects are not followed; point the destination at the final URL, then "
                 "replay");
  }
  switch (code) {
    case 400:
      return Final(code,
                   "the endpoint rejected the request as malformed; check what it expects, "
                   "then replay");
    case 401:
      return Final(code,
                   "the endpoint did not accept the credentials; check the destination's "
                   "signing secret or auth headers, then replay");
    case 403:
      return Final(code,
                   "the endpoint refuses this request; check its access rules (auth, IP "
                   "allow-list), then replay");
    case 404: return Final(code, "the endpoint says it does not exist; fix the URL, then replay");
    case 405:
      return Final(code,
                   "the endpoint does not accept this method; check the URL and method, then "
                   "replay");
    case 409:
      return Final(code,
                   "the endpoint reports a conflict with its current state (often an event it "
                   "already has); check the receiver, then replay if needed");
    case 410:
      return Final(code,
                   "the endpoint is gone; the destination will be paused; update its URL, "
                   "then resume it and replay");
    case 413:
      return Final(code,
                   "the endpoint refuses a payload this large; raise its body size limit, "
                   "then replay");
    case 415:
      return Final(code,
                   "the endpoint does not accept the event's Content-Type; make it accept "
                   "it, then replay");
    case 422:
      return Final(code,
                   "the endpoint understood the request but rejected its content; fix the "
                   "receiver's validation, then replay");
    case 408: return Retryable(code, "the endpoint timed out waiting for the request");
    case 429:
      return Retryable(code, "the endpoint is rate limiting; retries honour its Retry-After");
    case 500: return Retryable(code, "the endpoint failed while handling the event");
    case 502: return Retryable(code, "a proxy in front of the endpoint could not reach it");
    case 503: return Retryable(code, "the endpoint is temporarily unavailable");
    case 504: return Retryable(code, "a proxy in front of the endpoint timed out waiting for it");
  }
  if (code >= 500) return Retryable(code, "the endpoint reported a server error");
  return Final(code,
               "the endpoint rejected the request; fix the cause on the receiving side, then "
               "replay");
}

}  // namespace

std::string_view TransportErrorName(TransportError e) {
  switch (e) {
    case TransportError::kNone: return "none";
    case TransportError::kTimeout: return "timeout";
    case TransportError::kConnectionRefused: return "connection_refused";
    case TransportError::kConnectionReset: return "connection_reset";
    case TransportError::kDns: return "dns";
    case TransportError::kTls: return "tls";
    case TransportError::kPrivateAddress: return "private_address";
    case TransportError::kResponseTooLarge: return "response_too_large";
    case TransportError::kMalformedResponse: return "malformed_response";
    case TransportError::kOther: return "other";
  }
  return "unknown";
}

std::string_view BrokerAnswerName(BrokerAnswer a) {
  switch (a) {
    case BrokerAnswer::kNone: return "none";
    case BrokerAnswer::kAccepted: return "accepted";
    case BrokerAnswer::kBusy: return "busy";
    case BrokerAnswer::kRefused: return "refused";
  }
  return "unknown";
}

std::string_view OutcomeClassName(OutcomeClass c) {
  switch (c) {
    case OutcomeClass::kSuccess: return "success";
    case OutcomeClass::kRetryable: return "retryable";
    case OutcomeClass::kFinal: return "final";
  }
  return "unknown";
}

Classification Classify(const AttemptOutcome& outcome) {
  // The status line arrived, then the transfer failed: the endpoint answered, and it is the rest
  // of its response (usually the body) that is late or cut off. Still retryable: the event may
  // not have been handled.
  const std::string after_status =
      outcome.status_code > 0 ? " after status " + std::to_string(outcome.status_code) : "";
  switch (outcome.error) {
    case TransportError::kNone:
      switch (outcome.broker) {
        case BrokerAnswer::kNone: break;
        case BrokerAnswer::kAccepted:
          return {OutcomeClass::kSuccess, "accepted by the broker: " + outcome.broker_reply};
        case BrokerAnswer::kBusy:
          return {OutcomeClass::kRetryable,
                  "the broker cannot take it now: " + outcome.broker_reply};
        case BrokerAnswer::kRefused:
          return {OutcomeClass::kFinal,
                  "the broker refused it, which is not retried: " + outcome.broker_reply +
                      " (fix the destination or the broker, then replay)"};
      }
      return ClassifyStatus(outcome.status_code);
    case TransportError::kTimeout:
      if (!after_status.empty()) {
        return {OutcomeClass::kRetryable,
                "timeout" + after_status +
                    ": the endpoint sent its status line but not the rest of its response "
                    "within the attempt timeout (a body that is slow or never ends; make the "
                    "endpoint finish its response, or raise the destination's timeout)"};
      }
      if (outcome.only_interim) {
        return {OutcomeClass::kRetryable,
                "timeout: only interim 1xx responses (such as 100 Continue) arrived, never a "
                "final status, within the attempt timeout; make the endpoint send its final "
                "response"};
      }
      if (outcome.bytes_received > 0) {
        return {OutcomeClass::kRetryable,
                "timeout after " + std::to_string(outcome.bytes_received) +
                    " bytes of the response: the endpoint started answering but did not send a "
                    "complete status line within the attempt timeout (a response that is slow "
                    "or stalls; make the endpoint answer promptly)"};
      }
      return {OutcomeClass::kRetryable,
              "timeout: the endpoint did not answer within the attempt timeout (raise the "
              "destination's timeout if it is just slow)"};
    case TransportError::kConnectionRefused:
      return {OutcomeClass::kRetryable,
              "connection refused: nothing is listening at the endpoint's address"};
    case TransportError::kConnectionReset:
      if (!after_status.empty()) {
        return {OutcomeClass::kRetryable,
                "connection reset" + after_status +
                    ": the endpoint closed the connection in the middle of its response"};
      }
      if (outcome.bytes_received > 0) {
        return {OutcomeClass::kRetryable,
                "connection reset after " + std::to_string(outcome.bytes_received) +
                    " bytes of the response: the endpoint closed the connection before its "
                    "status line was complete"};
      }
      return {OutcomeClass::kRetryable,
              "connection reset: the endpoint closed the connection before answering"};
    case TransportError::kResponseTooLarge:
      return {OutcomeClass::kRetryable,
              "response too large: the endpoint's response headers exceed 300 KB in all (or "
              "100 KB in one field); make the endpoint send smaller headers"};
    case TransportError::kMalformedResponse:
      return {OutcomeClass::kRetryable,
              "malformed response: the endpoint sent a malformed HTTP response (not a valid "
              "status line or header); fix the endpoint's HTTP server"};
    case TransportError::kDns:
      return {OutcomeClass::kRetryable,
              "DNS error: the endpoint's host name did not resolve (check the URL if this "
              "persists)"};
    case TransportError::kTls:
      return {OutcomeClass::kRetryable,
              "TLS error: the handshake or a certificate check failed (which side, and why, "
              "follows)"};
    case TransportError::kPrivateAddress:
      return {OutcomeClass::kFinal,
              "private address is not retried: the endpoint resolves to a loopback or private "
              "address, which is not allowed; point the destination at a public address, then "
              "replay"};
    case TransportError::kOther:
      return {OutcomeClass::kRetryable, "transport error: the request could not be completed"};
  }
  return {OutcomeClass::kRetryable, "transport error: the request could not be completed"};
}

std::string_view StatusText(int status_code) {
  switch (status_code) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 102: return "Processing";
    case 103: return "Early Hints";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 207: return "Multi-Status";
    case 208: return "Already Reported";
    case 226: return "IM Used";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 305: return "Use Proxy";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 407: return "Proxy Authentication Required";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Content";
    case 423: return "Locked";
    case 424: return "Failed Dependency";
    case 425: return "Too Early";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    case 506: return "Variant Also Negotiates";
    case 507: return "Insufficient Storage";
    case 508: return "Loop Detected";
    case 510: return "Not Extended";
    case 511: return "Network Authentication Required";
  }
  return "";
}

}  // namespace hookrelay::policy
