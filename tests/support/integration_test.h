#pragma once

// The prologue of a black-box test of `hookrelay serve`: a temporary directory, a real sink, and
// the real binary started on a free port with a config of the test's own.
//
//   class ApiTest : public testing::IntegrationTest {
//    protected:
//     void SetUp() override {
//       StartServer(testing::Config().Source("src").Destination("d", sink_.url("/hooks"))
//                       .Route("src", "d"));
//     }
//   };
//   TEST_F(ApiTest, ...) { HttpResponse r = Api("GET", "/api/v1/events"); ... }

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/config_builder.h"
#include "support/hookrelay_server.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/sink.h"

namespace hookrelay::testing {

class IntegrationTest : public ::testing::Test {
 protected:
  // Starts (or, after StopServer, restarts) `hookrelay serve` with `config` on data_dir(), with
  // HOOKRELAY_ADMIN_TOKEN = admin_token_ and `env` (which may override it) in its environment.
  // A server that does not start fails the test fatally (so in SetUp the test body is skipped;
  // elsewhere wrap the call in ASSERT_NO_FATAL_FAILURE).
  void StartServer(const std::string& config, std::vector<std::string> extra_args = {},
                   std::map<std::string, std::string> env = {}) {
    env.emplace("HOOKRELAY_ADMIN_TOKEN", admin_token_);
    server_.reset();
    server_ = std::make_unique<HookrelayServer>(
        HookrelayServer::Options{config, data_dir(), std::move(extra_args), std::move(env)});
    ASSERT_TRUE(server_->ok()) << server_->output();
  }

  // SIGTERM; the server must exit cleanly (0).
  void StopServer() {
    ASSERT_NE(server_, nullptr);
    const std::string out = server_->output();
    ASSERT_EQ(server_->Stop(), 0) << out;
  }

  // One request to the server with `Authorization: Bearer <token>` (none when `token` is empty)
  // and, when there is a body, `Content-Type: application/json`.
  HttpResponse Api(const std::string& method, const std::string& target,
                   const std::string& body = "") {
    return ApiAs(admin_token_, method, target, body);
  }
  HttpResponse ApiAs(const std::string& token, const std::string& method, const std::string& target,
                     const std::string& body = "") {
    HttpConnection conn(server_->port());
    HeaderList headers;
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return conn.Send(method, target, headers, body);
  }

  std::string data_dir() const { return dir_.path() + "/data"; }

  // What the server is started with; a test may change it before StartServer.
  std::string admin_token_ = "integration-test-admin-token-0123";
  TempDir dir_;
  Sink sink_;
  std::unique_ptr<HookrelayServer> server_;  // declared last: stops before the sink goes
};

}  // namespace hookrelay::testing
