#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>

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

Result<std::unique_ptr<int>> Boxed(bool fail) {
  if (fail) return Status::NotFound("no box");
  return std::make_unique<int>(7);
}

// HR_ASSIGN_OR_RETURN moves the value out (a move-only type here) into a new variable or an
// existing one, and returns the error from a function returning a Result or a Status.
Result<int> Unbox(bool fail) {
  HR_ASSIGN_OR_RETURN(std::unique_ptr<int> box, Boxed(fail));
  int doubled = 0;
  HR_ASSIGN_OR_RETURN(std::unique_ptr<int> again, Boxed(false));
  doubled = *box + *again;
  return doubled;
}

Status UnboxInto(bool fail, std::unique_ptr<int>& out) {
  HR_ASSIGN_OR_RETURN(out, Boxed(fail));
  return Status::Ok();
}

TEST(ResultTest, AssignOrReturn) {
  Result<int> good = Unbox(false);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 14);
  Result<int> bad = Unbox(true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(bad.status().message(), "no box");

  std::unique_ptr<int> out;
  EXPECT_EQ(UnboxInto(true, out).code(), Status::Code::kNotFound);
  EXPECT_EQ(out, nullptr);
  ASSERT_TRUE(UnboxInto(false, out).ok());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(*out, 7);
}

}  // namespace
}  // namespace hookrelay
