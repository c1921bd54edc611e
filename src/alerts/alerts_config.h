#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace hookrelay::alerts {

// The [alerts] table of the config (the same fields as JSON):
//   {"smtp_url": "smtp://mail.example.com:587", "from": "hookrelay@example.com",
//    "to": ["ops@example.com"], "username": "…", "password": "…", "starttls": true,
//    "ca_file": "/etc/hookrelay/mail-ca.pem",
//    "webhook_url": "https://chat.example.com/hooks/…", "window": "5m"}
// Every field is optional; email needs smtp_url, from and to together. Credentials are only
// accepted with TLS (starttls, or an smtps:// URL), so a password never crosses the network in
// clear.
struct AlertsConfig {
  std::string smtp_url;  // "smtp://host:port" or "smtps://host:port"; empty: no email
  std::string from;      // envelope and header sender
  std::vector<std::string> to;
  std::string username;   // SMTP AUTH, when set
  std::string password;   // never shown (AlertsConfigToJson says "password_set")
  bool starttls = false;  // require STARTTLS on smtp:// (smtps:// is TLS from the start)
  // PEM certificates of the authorities to trust for the SMTP server and the alert webhook
  // (a private mail relay's CA), instead of the system's. Certificates are always verified.
  std::string ca_file;
  std::string webhook_url;                    // http(s); receives each alert as JSON; empty: none
  Duration window = std::chrono::minutes(5);  // batching and repeat-suppression window

  bool email_enabled() const { return !smtp_url.empty() && !to.empty(); }
  bool webhook_enabled() const { return !webhook_url.empty(); }
  bool enabled() const { return email_enabled() || webhook_enabled(); }
  bool operator==(const AlertsConfig&) const = default;
};

// Strict: unknown fields and bad values are InvalidArgument naming the field ("smtp_url",
// "to[1]", "window"). "to" may be one address or an array of addresses.
Result<AlertsConfig> ParseAlertsConfig(const boost::json::value& v);

// Every field but the password, which shows as "password_set": true|false.
boost::json::object AlertsConfigToJson(const AlertsConfig& c);

}  // namespace hookrelay::alerts
