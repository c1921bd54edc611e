// The sender's client certificates (issue 17) against a local TLS server that requires one
// (TlsResponder::kClientCertificate): delivered with the certificate its CA signed, refused as a
// TLS error with a reason without one or with an untrusted one, and a connection (or TLS
// session) made with one certificate is never reused for a request with another or none.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include "delivery/kinds/http/http_sender.h"
#include "support/tls_responder.h"

namespace hookrelay::delivery {
namespace {

using hookrelay::testing::TlsResponder;
using policy::TransportError;
using std::chrono::seconds;

SendResult SendAndWait(HttpSender& sender, SendRequest request) {
  auto promise = std::make_shared<std::promise<SendResult>>();
  auto future = promise->get_future();
  sender.Send(std::move(request), [promise](SendResult r) { promise->set_value(std::move(r)); });
  if (future.wait_for(seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "no result within 30 s";
    return {};
  }
  return future.get();
}

class SenderTlsTest : public ::testing::Test {
 protected:
  SenderTlsTest() : sender_(Options(), SystemClock::Instance()) {}

  static HttpSender::Options Options() {
    HttpSender::Options o;
    o.allow_private_destinations = true;
    return o;
  }

  std::shared_ptr<const model::DestinationTls> Tls(const std::string& cert, const std::string& key,
                                                   const std::string& ca) {
    auto tls = std::make_shared<model::DestinationTls>();
    tls->client_cert = cert;
    tls->client_key = key;
    tls->ca = ca;
    return tls;
  }
  std::shared_ptr<const model::DestinationTls> Good() {
    return Tls(server_.client_cert_pem(), server_.client_key_pem(), server_.ca_pem());
  }
  std::shared_ptr<const model::DestinationTls> NoCert() { return Tls("", "", server_.ca_pem()); }
  std::shared_ptr<const model::DestinationTls> Untrusted() {
    return Tls(server_.untrusted_cert_pem(), server_.untrusted_key_pem(), server_.ca_pem());
  }

  SendResult Post(std::shared_ptr<const model::DestinationTls> tls) {
    SendRequest r;
    r.url = server_.url() + "hook";
    r.body = "{}";
    r.headers = {{"Content-Type", "application/json"}};
    r.timeout = seconds(10);
    r.tls = std::move(tls);
    return SendAndWait(sender_, std::move(r));
  }

  TlsResponder server_{TlsResponder::Mode::kClientCertificate};
  HttpSender sender_;
};

TEST_F(SenderTlsTest, DeliversWithTheRightCertificate) {
  SendResult r = Post(Good());
  EXPECT_EQ(r.outcome.error, TransportError::kNone) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 200);
  EXPECT_EQ(r.snippet, "ok");
  EXPECT_EQ(server_.client_names(), std::vector<std::string>{"hookrelay-client"});
}

TEST_F(SenderTlsTest, WithoutACertificateItIsATlsErrorSayingSo) {
  SendResult r = Post(NoCert());
  EXPECT_EQ(r.outcome.error, TransportError::kTls) << r.error_detail;
  EXPECT_EQ(r.outcome.status_code, 0);
  EXPECT_NE(r.error_detail.find("the server requires a client certificate; set tls.client_cert"),
            std::string::npos)
      << r.error_detail;
  EXPECT_TRUE(server_.client_names().empty());
}

TEST_F(SenderTlsTest, WithAnUntrustedCertificateItIsATlsErrorSayingSo) {
  SendResult r = Post(Untrusted());
  EXPECT_EQ(r.outcome.error, TransportError::kTls) << r.error_detail;
  EXPECT_NE(r.error_detail.find("does not trust the client certificate"), std::string::npos)
      << r.error_detail;
  EXPECT_TRUE(server_.client_names().empty());
}

TEST_F(SenderTlsTest, WithoutThePrivateCaTheServerIsNotTrusted) {
  SendResult r = Post(Tls(server_.client_cert_pem(), server_.client_key_pem(), ""));
  EXPECT_EQ(r.outcome.error, TransportError::kTls) << r.error_detail;
  EXPECT_EQ(r.error_detail.rfind("certificate verify failed: ", 0), 0u) << r.error_detail;
  EXPECT_NE(r.error_detail.find("tls.ca_file"), std::string::npos) << r.error_detail;
  EXPECT_EQ(server_.connections(), 1);
  EXPECT_EQ(server_.handshakes_completed(), 0);
}

// libcurl keys kept connections and TLS sessions on the client certificate and CA blobs: the
// same settings share a connection; other settings (or none) to the same host:port never ride
// on it, so they are judged by the server on a handshake of their own.
TEST_F(SenderTlsTest, AConnectionIsReusedOnlyWithTheSameCertificate) {
  auto good = Good();
  ASSERT_EQ(Post(good).outcome.status_code, 200);
  ASSERT_EQ(Post(good).outcome.status_code, 200);
  EXPECT_EQ(server_.connections(), 1);  // kept alive and reused: the test can tell reuse apart

  // The same PEM texts in another object (another destination with the same files) may share it.
  ASSERT_EQ(Post(Good()).outcome.status_code, 200);

  const int before = server_.connections();
  SendResult none = Post(NoCert());
  EXPECT_EQ(none.outcome.error, TransportError::kTls) << none.error_detail;
  SendResult untrusted = Post(Untrusted());
  EXPECT_EQ(untrusted.outcome.error, TransportError::kTls) << untrusted.error_detail;
  EXPECT_EQ(server_.connections(), before + 2);

  // And the other way round: the good certificate after the refused ones still delivers.
  EXPECT_EQ(Post(good).outcome.status_code, 200);
  EXPECT_EQ(server_.client_names(),
            (std::vector<std::string>{"hookrelay-client", "hookrelay-client", "hookrelay-client",
                                      "hookrelay-client"}));
}

}  // namespace
}  // namespace hookrelay::delivery
