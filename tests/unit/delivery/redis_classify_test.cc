// Issue 30: the Redis kind's outcomes (delivery/kinds/redis/classify.h), and how the policy
// classifies a broker's answer.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <cerrno>
#include <string>

#include "delivery/kinds/redis/classify.h"
#include "policy/outcome.h"

namespace hookrelay::delivery::redis {
namespace {

using policy::BrokerAnswer;
using policy::TransportError;

TEST(RedisClassifyTest, BackPressureAndNotReadyAreBusy) {
  for (const char* reply :
       {"LOADING Redis is loading the dataset in memory",
        "OOM command not allowed when used memory > 'maxmemory'.",
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "TRYAGAIN Multiple keys request during rehashing of slot",
        "CLUSTERDOWN The cluster is down", "READONLY You can't write against a read only replica.",
        "NOREPLICAS Not enough good replicas to write.",
        "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist",
        "ERR max number of clients reached"}) {
    EXPECT_EQ(ClassifyErrorReply(reply), BrokerAnswer::kBusy) << reply;
  }
}

TEST(RedisClassifyTest, EveryOtherErrorIsRefused) {
  for (const char* reply :
       {"NOAUTH Authentication required.",
        "WRONGPASS invalid username-password pair or user is disabled.",
        "NOPERM this user has no permissions to run the 'xadd' command",
        "WRONGTYPE Operation against a key holding the wrong kind of value",
        "ERR The ID specified in XADD is equal or smaller than the target stream top item",
        "ERR unknown command 'XADD'", "ERR Protocol error: invalid bulk length",
        "ERR DB index is out of range", "MOVED 3999 127.0.0.1:6381", "SOMETHINGNEW whatever",
        "BUSYGROUP Consumer Group name already exists", ""}) {
    EXPECT_EQ(ClassifyErrorReply(reply), BrokerAnswer::kRefused) << reply;
  }
}

TEST(RedisClassifyTest, ContextErrorsAreTransportErrors) {
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, ECONNREFUSED), TransportError::kConnectionRefused);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, ECONNRESET), TransportError::kConnectionReset);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, EPIPE), TransportError::kConnectionReset);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, EAGAIN), TransportError::kTimeout);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, ETIMEDOUT), TransportError::kTimeout);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, EINPROGRESS), TransportError::kTimeout);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_IO, EHOSTUNREACH), TransportError::kOther);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_EOF, 0), TransportError::kConnectionReset);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_PROTOCOL, 0), TransportError::kMalformedResponse);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_OOM, 0), TransportError::kOther);
  EXPECT_EQ(ClassifyContextError(REDIS_ERR_OTHER, 0), TransportError::kOther);
}

TEST(RedisClassifyTest, ThePolicyClassesABrokersAnswerWithItsWords) {
  policy::AttemptOutcome o;
  o.broker = BrokerAnswer::kAccepted;
  o.broker_reply = "1700000000000-0";
  policy::Classification c = policy::Classify(o);
  EXPECT_EQ(c.cls, policy::OutcomeClass::kSuccess);
  EXPECT_NE(c.reason.find("1700000000000-0"), std::string::npos) << c.reason;

  o.broker = BrokerAnswer::kBusy;
  o.broker_reply = "LOADING Redis is loading the dataset in memory";
  c = policy::Classify(o);
  EXPECT_EQ(c.cls, policy::OutcomeClass::kRetryable);
  EXPECT_NE(c.reason.find(o.broker_reply), std::string::npos) << c.reason;

  o.broker = BrokerAnswer::kRefused;
  o.broker_reply = "WRONGTYPE Operation against a key holding the wrong kind of value";
  c = policy::Classify(o);
  EXPECT_EQ(c.cls, policy::OutcomeClass::kFinal);
  EXPECT_NE(c.reason.find(o.broker_reply), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("replay"), std::string::npos) << c.reason;  // says what to do

  // A transport error wins over a broker answer (none can come with it, but the rule is one).
  o.error = TransportError::kTimeout;
  EXPECT_EQ(policy::Classify(o).cls, policy::OutcomeClass::kRetryable);
}

}  // namespace
}  // namespace hookrelay::delivery::redis
