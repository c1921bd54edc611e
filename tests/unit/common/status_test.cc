#include "common/status.h"

#include <gtest/gtest.h>

#include "common/result.h"

namespace hookrelay {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeMessageField) {
  Status s = Status::InvalidArgument("must be >= base", "cap");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.field(), "cap");
  EXPECT_EQ(s.ToString(), "invalid_argument: cap: must be >= base");
}

TEST(StatusTest, FieldPrefixNests) {
  Status s = Status::InvalidArgument("bad", "cap").WithFieldPrefix("policy");
  EXPECT_EQ(s.field(), "policy.cap");
  EXPECT_EQ(s.WithFieldPrefix("destinations[0]").field(), "destinations[0].policy.cap");
  EXPECT_EQ(Status::InvalidArgument("bad", "[2]").WithFieldPrefix("delays").field(), "delays[2]");
  EXPECT_EQ(Status::InvalidArgument("bad").WithFieldPrefix("url").field(), "url");
  EXPECT_TRUE(Status::Ok().WithFieldPrefix("x").field().empty());
}

TEST(StatusTest, CodeNamesAreSnakeCase) {
  EXPECT_EQ(Status::CodeName(Status::Code::kNotFound), "not_found");
  EXPECT_EQ(Status::CodeName(Status::Code::kResourceExhausted), "resource_exhausted");
  EXPECT_EQ(Status::CodeName(Status::Code::kUnavailable), "unavailable");
}

Status FailsWhen(bool fail) {
  HR_RETURN_IF_ERROR(fail ? Status::NotFound("gone") : Status::Ok());
  return Status::Ok();
}

TEST(ResultTest, ValueOrError) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = Status::NotFound("nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(FailsWhen(true).code(), Status::Code::kNotFound);
  EXPECT_TRUE(FailsWhen(false).ok());
}

}  // namespace
}  // namespace hookrelay
