#include "access/token_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/crypto.h"

namespace hookrelay::access {
namespace {

const std::string kBootstrap = "bootstrap-token-0123456789";

store::ApiToken Named(const std::string& name, const std::string& token, const std::string& role) {
  store::ApiToken t;
  t.name = name;
  t.hash = HexEncode(Sha256(token));
  t.role = role;
  return t;
}

class TokenRegistryTest : public ::testing::Test {
 protected:
  std::optional<Principal> Who(const std::string& authorization) {
    return registry_.Authenticate(authorization).principal;
  }
  std::string Why(const std::string& authorization) {
    return registry_.Authenticate(authorization).error;
  }

  FakeClock clock_;
  TokenRegistry registry_{HexEncode(Sha256(kBootstrap)), clock_};
};

TEST(RoleTest, EachRoleMayDoWhatTheOnesBeforeItMay) {
  for (Role r : {Role::kViewer, Role::kOperator, Role::kAdmin}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
    EXPECT_TRUE(RoleAllows(r, r));
    EXPECT_TRUE(RoleAllows(r, Role::kViewer));
  }
  EXPECT_FALSE(RoleAllows(Role::kViewer, Role::kOperator));
  EXPECT_FALSE(RoleAllows(Role::kOperator, Role::kAdmin));
  EXPECT_TRUE(RoleAllows(Role::kAdmin, Role::kOperator));
  EXPECT_EQ(RoleName(Role{}), "none");
  EXPECT_FALSE(ParseRole("none").has_value());
  EXPECT_FALSE(ParseRole("Admin").has_value());
}

TEST_F(TokenRegistryTest, TheBootstrapTokenIsAnAdminUntilRevoked) {
  EXPECT_EQ(Who("Bearer " + kBootstrap), (Principal{"bootstrap", Role::kAdmin}));
  EXPECT_EQ(Who("bearer " + kBootstrap), (Principal{"bootstrap", Role::kAdmin}));
  store::ApiToken row;
  row.name = "bootstrap";
  row.role = "admin";
  registry_.Replace({row});
  EXPECT_TRUE(Who("Bearer " + kBootstrap).has_value()) << "a row that is not revoked";
  row.revoked = true;
  registry_.Replace({row});
  EXPECT_FALSE(Who("Bearer " + kBootstrap).has_value());
  EXPECT_NE(Why("Bearer " + kBootstrap).find("bootstrap token was revoked"), std::string::npos);
}

TEST_F(TokenRegistryTest, NamedTokensAreFoundByTheirHashWithTheirRole) {
  registry_.Replace({Named("dash", "hr_dash", "viewer"), Named("ci", "hr_ci", "operator")});
  EXPECT_EQ(Who("Bearer hr_dash"), (Principal{"dash", Role::kViewer}));
  EXPECT_EQ(Who("Bearer hr_ci"), (Principal{"ci", Role::kOperator}));
  for (const char* wrong : {"Bearer hr_other", "Bearer ", "Basic hr_dash", "hr_dash", ""}) {
    EXPECT_FALSE(Who(wrong).has_value()) << wrong;
  }
  EXPECT_EQ(Why("Bearer hr_other"), "wrong bearer token");
  // Replace drops what the store no longer has.
  registry_.Replace({Named("ci", "hr_ci", "operator")});
  EXPECT_FALSE(Who("Bearer hr_dash").has_value());
  // A row this version cannot read grants nothing.
  registry_.Replace({Named("odd", "hr_odd", "superuser"), Named("empty", "", "admin")});
  EXPECT_FALSE(Who("Bearer hr_odd").has_value());
  EXPECT_FALSE(Who("Bearer ").has_value());
}

TEST_F(TokenRegistryTest, AnExpiredTokenIsRefusedSayingWhen) {
  store::ApiToken t = Named("ci", "hr_ci", "operator");
  t.expires_at = clock_.Now() + std::chrono::hours(1);
  registry_.Replace({t});
  clock_.Advance(std::chrono::hours(1) - std::chrono::milliseconds(1));
  EXPECT_TRUE(Who("Bearer hr_ci").has_value());
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_FALSE(Who("Bearer hr_ci").has_value());
  EXPECT_NE(Why("Bearer hr_ci").find("token \"ci\" expired at"), std::string::npos)
      << Why("Bearer hr_ci");
}

TEST_F(TokenRegistryTest, UsesKeepTheLatestPerTokenUntilTaken) {
  const TimePoint t0 = clock_.Now();
  registry_.NoteUse("ci", t0 + std::chrono::seconds(2), "192.0.2.1");
  registry_.NoteUse("ci", t0 + std::chrono::seconds(1), "192.0.2.9");  // older: kept out
  registry_.NoteUse("dash", t0, "::1");
  auto uses = registry_.TakeUses();
  ASSERT_EQ(uses.size(), 2u);
  EXPECT_EQ(uses.at("ci").addr, "192.0.2.1");
  EXPECT_EQ(uses.at("ci").at, t0 + std::chrono::seconds(2));
  EXPECT_TRUE(registry_.TakeUses().empty());
}

}  // namespace
}  // namespace hookrelay::access
