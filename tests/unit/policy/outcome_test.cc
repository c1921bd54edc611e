#include "policy/outcome.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace hookrelay::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

Classification ClassifyStatus(int code) { return Classify(AttemptOutcome{.status_code = code}); }

// The rule, stated independently of the implementation's structure.
OutcomeClass ExpectedClass(int code) {
  if (code >= 200 && code <= 299) return OutcomeClass::kSuccess;
  if (code == 408 || code == 429 || (code >= 500 && code <= 599)) return OutcomeClass::kRetryable;
  return OutcomeClass::kFinal;
}

TEST(ClassifyTest, EveryStatusFrom100To599) {
  int counts[3] = {0, 0, 0};
  for (int code = 100; code <= 599; ++code) {
    SCOPED_TRACE(code);
    Classification c = ClassifyStatus(code);
    EXPECT_EQ(c.cls, ExpectedClass(code));
    ++counts[static_cast<int>(c.cls)];
    // Every reason names the status first, with its phrase when it has one.
    std::string label = std::to_string(code);
    if (!StatusText(code).empty()) label += " " + std::string(StatusText(code));
    EXPECT_THAT(c.reason, StartsWith(label + (c.cls == OutcomeClass::kFinal ? " " : ":")));
    switch (c.cls) {
      case OutcomeClass::kSuccess: EXPECT_EQ(c.reason, label + ": delivered"); break;
      case OutcomeClass::kFinal:
        EXPECT_THAT(c.reason, StartsWith(label + " is not retried: "));
        EXPECT_THAT(c.reason, HasSubstr("replay"));  // says what to do
        break;
      case OutcomeClass::kRetryable: EXPECT_GT(c.reason.size(), label.size() + 10); break;
    }
  }
  EXPECT_EQ(counts[static_cast<int>(OutcomeClass::kSuccess)], 100);
  EXPECT_EQ(counts[static_cast<int>(OutcomeClass::kRetryable)], 102);
  EXPECT_EQ(counts[static_cast<int>(OutcomeClass::kFinal)], 298);
}

TEST(ClassifyTest, CodesOutsideTheRangeAreFinal) {
  for (int code : {-1, 0, 1, 99, 600, 999, 1000, 2147483647}) {
    Classification c = ClassifyStatus(code);
    EXPECT_EQ(c.cls, OutcomeClass::kFinal) << code;
    EXPECT_THAT(c.reason, HasSubstr("HTTP status " + std::to_string(code) + " is not retried"));
    EXPECT_THAT(c.reason, HasSubstr("outside the valid range"));
  }
}

TEST(ClassifyTest, SpecificFinalReasons) {
  EXPECT_EQ(ClassifyStatus(404).reason,
            "404 Not Found is not retried: the endpoint says it does not exist; fix the URL, "
            "then replay");
  EXPECT_EQ(ClassifyStatus(301).reason,
            "301 Moved Permanently is not retried: redirects are not followed; point the "
            "destination at the final URL, then replay");
  EXPECT_EQ(ClassifyStatus(410).reason,
            "410 Gone is not retried: the endpoint is gone; the destination will be paused; "
            "update its URL, then resume it and replay");
  struct Case {
    int code;
    const char* says;
  };
  const Case cases[] = {
      {400, "malformed"},
      {401, "signing secret"},
      {403, "access rules"},
      {405, "method"},
      {409, "conflict"},
      {413, "body size limit"},
      {415, "Content-Type"},
      {422, "rejected its content"},
      {302, "redirects are not followed"},
      {307, "redirects are not followed"},
      {308, "redirects are not followed"},
      {304, "redirects are not followed"},
      {101, "informational"},
  };
  for (const Case& c : cases) {
    Classification r = ClassifyStatus(c.code);
    EXPECT_EQ(r.cls, OutcomeClass::kFinal) << c.code;
    EXPECT_THAT(r.reason, HasSubstr(c.says)) << c.code;
  }
  // The generic text still names the status and what to do.
  EXPECT_EQ(ClassifyStatus(418).reason,
            "418 is not retried: the endpoint rejected the request; fix the cause on the "
            "receiving side, then replay");
  EXPECT_THAT(ClassifyStatus(451).reason,
              StartsWith("451 Unavailable For Legal Reasons is not retried: "));
}

TEST(ClassifyTest, SpecificRetryableReasons) {
  EXPECT_EQ(ClassifyStatus(503).reason,
            "503 Service Unavailable: the endpoint is temporarily unavailable");
  EXPECT_EQ(ClassifyStatus(429).reason,
            "429 Too Many Requests: the endpoint is rate limiting; retries honour its "
            "Retry-After");
  EXPECT_THAT(ClassifyStatus(408).reason, StartsWith("408 Request Timeout: "));
  EXPECT_THAT(ClassifyStatus(500).reason, HasSubstr("failed while handling"));
  EXPECT_THAT(ClassifyStatus(502).reason, HasSubstr("could not reach"));
  EXPECT_THAT(ClassifyStatus(504).reason, HasSubstr("timed out"));
  EXPECT_EQ(ClassifyStatus(599).reason, "599: the endpoint reported a server error");
  EXPECT_EQ(ClassifyStatus(507).reason,
            "507 Insufficient Storage: the endpoint reported a server error");
}

TEST(ClassifyTest, TransportErrors) {
  struct Case {
    TransportError error;
    OutcomeClass cls;
    const char* starts;
  };
  const Case cases[] = {
      {TransportError::kTimeout, OutcomeClass::kRetryable, "timeout: "},
      {TransportError::kConnectionRefused, OutcomeClass::kRetryable, "connection refused: "},
      {TransportError::kConnectionReset, OutcomeClass::kRetryable, "connection reset: "},
      {TransportError::kDns, OutcomeClass::kRetryable, "DNS error: "},
      {TransportError::kTls, OutcomeClass::kRetryable, "TLS error: "},
      {TransportError::kOther, OutcomeClass::kRetryable, "transport error: "},
      {TransportError::kPrivateAddress, OutcomeClass::kFinal, "private address is not retried: "},
      {TransportError::kResponseTooLarge, OutcomeClass::kRetryable, "response too large: "},
      {TransportError::kMalformedResponse, OutcomeClass::kRetryable, "malformed response: "},
  };
  for (const Case& c : cases) {
    // The error decides the class whatever status line came before it; a timeout or reset after
    // one says so ("timeout after status 200: …").
    for (int status : {0, 200, 404}) {
      Classification r = Classify(AttemptOutcome{.status_code = status, .error = c.error});
      EXPECT_EQ(r.cls, c.cls) << TransportErrorName(c.error);
      const bool names_status = status > 0 && (c.error == TransportError::kTimeout ||
                                               c.error == TransportError::kConnectionReset);
      std::string starts = c.starts;
      if (names_status) {
        starts =
            starts.substr(0, starts.size() - 2) + " after status " + std::to_string(status) + ": ";
      }
      EXPECT_THAT(r.reason, StartsWith(starts));
    }
  }
  EXPECT_THAT(Classify(AttemptOutcome{.error = TransportError::kPrivateAddress}).reason,
              HasSubstr("public address, then replay"));
}

TEST(StatusTextTest, StandardPhrases) {
  EXPECT_EQ(StatusText(100), "Continue");
  EXPECT_EQ(StatusText(200), "OK");
  EXPECT_EQ(StatusText(204), "No Content");
  EXPECT_EQ(StatusText(301), "Moved Permanently");
  EXPECT_EQ(StatusText(308), "Permanent Redirect");
  EXPECT_EQ(StatusText(400), "Bad Request");
  EXPECT_EQ(StatusText(401), "Unauthorized");
  EXPECT_EQ(StatusText(404), "Not Found");
  EXPECT_EQ(StatusText(408), "Request Timeout");
  EXPECT_EQ(StatusText(410), "Gone");
  EXPECT_EQ(StatusText(413), "Content Too Large");
  EXPECT_EQ(StatusText(422), "Unprocessable Content");
  EXPECT_EQ(StatusText(429), "Too Many Requests");
  EXPECT_EQ(StatusText(431), "Request Header Fields Too Large");
  EXPECT_EQ(StatusText(500), "Internal Server Error");
  EXPECT_EQ(StatusText(503), "Service Unavailable");
  EXPECT_EQ(StatusText(511), "Network Authentication Required");
}

TEST(StatusTextTest, UnregisteredCodesHaveNoPhrase) {
  for (int code : {0, 99, 199, 306, 418, 420, 499, 509, 599, 600}) {
    EXPECT_EQ(StatusText(code), "") << code;
  }
}

TEST(NamesTest, TransportErrorsAndClasses) {
  EXPECT_EQ(TransportErrorName(TransportError::kNone), "none");
  EXPECT_EQ(TransportErrorName(TransportError::kTimeout), "timeout");
  EXPECT_EQ(TransportErrorName(TransportError::kConnectionRefused), "connection_refused");
  EXPECT_EQ(TransportErrorName(TransportError::kConnectionReset), "connection_reset");
  EXPECT_EQ(TransportErrorName(TransportError::kDns), "dns");
  EXPECT_EQ(TransportErrorName(TransportError::kTls), "tls");
  EXPECT_EQ(TransportErrorName(TransportError::kPrivateAddress), "private_address");
  EXPECT_EQ(TransportErrorName(TransportError::kOther), "other");
  EXPECT_EQ(TransportErrorName(TransportError::kMalformedResponse), "malformed_response");
  EXPECT_EQ(OutcomeClassName(OutcomeClass::kSuccess), "success");
  EXPECT_EQ(OutcomeClassName(OutcomeClass::kRetryable), "retryable");
  EXPECT_EQ(OutcomeClassName(OutcomeClass::kFinal), "final");
}

// Issue 11.9: a timeout after the status line arrived says so (the endpoint answered; its body
// is late), and stays retryable like any timeout.
TEST(ClassifyTest, TimeoutAfterTheStatusLineNamesTheStatus) {
  Classification c =
      Classify(AttemptOutcome{.status_code = 200, .error = TransportError::kTimeout});
  EXPECT_EQ(c.cls, OutcomeClass::kRetryable);
  EXPECT_THAT(c.reason, StartsWith("timeout after status 200"));
  EXPECT_THAT(c.reason, Not(HasSubstr("did not answer")));

  c = Classify(AttemptOutcome{.status_code = 500, .error = TransportError::kConnectionReset});
  EXPECT_EQ(c.cls, OutcomeClass::kRetryable);
  EXPECT_THAT(c.reason, StartsWith("connection reset after status 500"));
  EXPECT_THAT(c.reason, Not(HasSubstr("before answering")));
}

// A timeout with part of a response (no complete status line), or with only 1xx interim
// responses, says so instead of "did not answer".
TEST(ClassifyTest, TimeoutWithAPartialOrInterimResponseSaysSo) {
  AttemptOutcome partial{.error = TransportError::kTimeout};
  partial.bytes_received = 12;
  Classification c = Classify(partial);
  EXPECT_EQ(c.cls, OutcomeClass::kRetryable);
  EXPECT_THAT(c.reason, StartsWith("timeout after 12 bytes of the response"));
  AttemptOutcome interim{.error = TransportError::kTimeout};
  interim.only_interim = true;
  c = Classify(interim);
  EXPECT_EQ(c.cls, OutcomeClass::kRetryable);
  EXPECT_THAT(c.reason, StartsWith("timeout: only interim 1xx responses"));
  AttemptOutcome reset{.error = TransportError::kConnectionReset};
  reset.bytes_received = 3;
  EXPECT_THAT(Classify(reset).reason, StartsWith("connection reset after 3 bytes of the response"));
  c = Classify(AttemptOutcome{.error = TransportError::kMalformedResponse});
  EXPECT_THAT(c.reason, HasSubstr("the endpoint sent a malformed HTTP response"));
}

}  // namespace
}  // namespace hookrelay::policy
