#include "app/admin_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/crypto.h"
#include "common/file_text.h"

namespace hookrelay::app {

namespace {

Status WriteHash(const std::string& path, const std::string& hash) {
  return WritePrivateFile(path, hash + "\n");
}

}  // namespace

Result<AdminTokenPlan> PlanAdminToken(const std::string& dir, const std::string& env_token,
                                      const std::string& env_name) {
  AdminTokenPlan plan;
  if (!env_token.empty()) {
    // A client cannot send these in a header (surrounding whitespace is stripped, control
    // characters are refused), so such a token would lock everyone out. The token itself is never
    // echoed.
    for (size_t i = 0; i < env_token.size(); ++i) {
      const auto c = static_cast<unsigned char>(env_token[i]);
      if (c <= 0x20 || c == 0x7f) {
        return Status::InvalidArgument(
            env_name + " contains " + (c == ' ' ? "a space" : "whitespace or a control character") +
            " (at character " + std::to_string(i + 1) +
            "), which clients cannot send reliably in an Authorization header; set it to printable "
            "characters only, e.g. from `openssl rand -hex 32` (check for a trailing newline)");
      }
    }
    if (env_token.size() < 16) {
      return Status::InvalidArgument(env_name +
                                     " must be at least 16 characters (32 or more recommended: "
                                     "openssl rand -hex 32)");
    }
    plan.origin = AdminTokenPlan::Origin::kEnvironment;
    plan.env_name = env_name;
    plan.sha256_hex = HexEncode(Sha256(env_token));
    plan.store_hash = true;
    if (env_token.size() < kStrongTokenLength) {
      plan.warnings.push_back(env_name + " is only " + std::to_string(env_token.size()) +
                              " characters; use at least " + std::to_string(kStrongTokenLength) +
                              " random ones, e.g. from `openssl rand -hex 32`");
    }
    return plan;
  }
  std::ifstream in(dir + "/admin-token.sha256");
  std::string stored;
  if (in >> stored && stored.size() == 64) {
    plan.origin = AdminTokenPlan::Origin::kStored;
    plan.sha256_hex = stored;
    return plan;
  }
  plan.origin = AdminTokenPlan::Origin::kGenerated;
  plan.generated = "hr_" + RandomHexToken(24);
  plan.sha256_hex = HexEncode(Sha256(plan.generated));
  plan.store_hash = true;
  return plan;
}

namespace {

// `text` as one shell word in single quotes.
std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string SignedTestEventHint(const std::string& url, const std::string& source,
                                const model::VerifyConfig& verify) {
  const std::string scheme(model::VerifySchemeName(verify.scheme));
  const std::string target = url + "/in/" + source;
  std::string out = "  # source \"" + source + "\" checks " + scheme +
                    " signatures (unsigned requests get 401); with SECRET set to its secret:\n";
  // openssl prints "HMAC-SHA2-256(stdin)= <hex>" (1.1: "(stdin)= <hex>").
  auto hex_mac = [](const std::string& algorithm, const std::string& input) {
    return "$(printf %s " + input + " | openssl dgst -" + algorithm +
           " -hmac \"$SECRET\" | sed 's/^.*= //')";
  };
  auto base64_mac = [](const std::string& algorithm, const std::string& input) {
    return "$(printf %s " + input + " | openssl dgst -" + algorithm +
           " -hmac \"$SECRET\" -binary | base64 -w0)";
  };
  const std::string body = "  BODY='{\"hello\":\"world\"}'";
  const std::string curl =
      "  curl -X POST " + target + " -H 'Content-Type: application/json' -d \"$BODY\" -H ";
  switch (verify.scheme) {
    case model::VerifyScheme::kGithub:
      out += body + "; SIG=" + hex_mac("sha256", "\"$BODY\"") + "\n";
      out += curl + "\"X-Hub-Signature-256: sha256=$SIG\"\n";
      break;
    case model::VerifyScheme::kShopify:
      out += body + "; SIG=" + base64_mac("sha256", "\"$BODY\"") + "\n";
      out += curl + "\"X-Shopify-Hmac-Sha256: $SIG\"\n";
      break;
    case model::VerifyScheme::kStripe:
      out += body + "; T=$(date +%s); SIG=" + hex_mac("sha256", "\"$T.$BODY\"") + "\n";
      out += curl + "\"Stripe-Signature: t=$T,v1=$SIG\"\n";
      break;
    case model::VerifyScheme::kHmac: {
      const std::string mac = verify.encoding == "base64"
                                  ? base64_mac(verify.algorithm, "\"$BODY\"")
                                  : hex_mac(verify.algorithm, "\"$BODY\"");
      out += body + "; SIG=" + mac + "\n";
      out += curl + ShellQuote(verify.header + ": " + verify.prefix) + "\"$SIG\"\n";
      break;
    }
    case model::VerifyScheme::kStandard:
      out +=
          "  # (standard webhooks: webhook-id, webhook-timestamp and webhook-signature "
          "\"v1,<base64 HMAC-SHA256 of id.timestamp.body>\", the key the base64 after whsec_; "
          "see docs/ingest.md)\n";
      break;
  }
  return out;
}

Status CommitAdminToken(const std::string& dir, const AdminTokenPlan& plan, std::ostream& out,
                        const NextStepsContext& next) {
  const std::string path = dir + "/admin-token.sha256";
  if (plan.store_hash) HR_RETURN_IF_ERROR(WriteHash(path, plan.sha256_hex));
  switch (plan.origin) {
    case AdminTokenPlan::Origin::kEnvironment:
      out << "Admin token: from " << plan.env_name << "\n";
      break;
    case AdminTokenPlan::Origin::kStored:
      out << "Admin token: set on first start (its hash is in " << path
          << "); set HOOKRELAY_TOKEN to replace it\n";
      break;
    case AdminTokenPlan::Origin::kGenerated:
      out << "Admin token (shown once, keep it; only its hash is stored): " << plan.generated
          << "\n"
          << "Next, in another shell:\n"
          << "  export HOOKRELAY_TOKEN=" << plan.generated << "\n";
      // The CLI's default API address (cli::kDefaultApiUrl); any other needs HOOKRELAY_URL.
      if (!next.url.empty() && next.url != "http://127.0.0.1:8080") {
        out << "  export HOOKRELAY_URL=" << next.url << "\n";
      }
      if (!next.sources.empty() || next.destinations > 0) {
        // The catalog is already set up (a config file): look at it and send a test event.
        out << "  hookrelay sources list; hookrelay destinations list; hookrelay routes list\n";
        if (!next.sources.empty()) {
          const std::string url = next.url.empty() ? "http://HOST:PORT" : next.url;
          if (next.first_verify) {
            // Every source checks signatures: an unsigned curl would get 401.
            out << SignedTestEventHint(url, next.sources.front(), *next.first_verify);
          } else {
            out << "  curl -X POST " << url << "/in/" << next.sources.front()
                << " -H 'Content-Type: application/json' -d '{\"hello\":\"world\"}'\n";
          }
          out << "  hookrelay events list\n";
        }
        break;
      }
      out << "  hookrelay sources add github --verify github --secret @github-secret.txt\n"
          << "  hookrelay destinations add billing https://billing.example.com/hooks\n"
          << "  hookrelay routes add github billing\n"
          << "(or start with --config hookrelay.toml; see docs/configuration.md)\n";
      break;
  }
  return Status::Ok();
}

}  // namespace hookrelay::app
