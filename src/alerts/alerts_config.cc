#include "alerts/alerts_config.h"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include "common/units.h"
#include "model/json_fields.h"

namespace hookrelay::alerts {

namespace json = boost::json;

namespace {

Status ValidateUrl(std::string_view url, std::string_view field,
                   std::initializer_list<std::string_view> schemes) {
  std::string list;
  for (std::string_view s : schemes) list += (list.empty() ? "" : " or ") + std::string(s) + "://";
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed)
    return Status::InvalidArgument("must be an absolute " + list + " URL", std::string(field));
  std::string scheme(parsed->scheme());
  bool known = false;
  for (std::string_view s : schemes) known = known || scheme == s;
  if (!known) {
    return Status::InvalidArgument("must start with " + list + ", not " + scheme + "://",
                                   std::string(field));
  }
  if (!parsed->has_authority() || parsed->encoded_host().empty()) {
    return Status::InvalidArgument("must name a host", std::string(field));
  }
  if (parsed->has_userinfo()) {
    return Status::InvalidArgument(field == "smtp_url"
                                       ? "must not carry credentials; use username and password"
                                       : "must not carry credentials",
                                   std::string(field));
  }
  return Status::Ok();
}

// A bare address as SMTP needs it: local@domain, printable ASCII, nothing that could break out
// of a header field or the MAIL FROM/RCPT TO command.
Status ValidateAddress(std::string_view a, const std::string& field) {
  size_t at = a.rfind('@');
  if (a.empty() || a.size() > 254 || at == std::string_view::npos || at == 0 ||
      at + 1 == a.size()) {
    return Status::InvalidArgument("must be an email address such as ops@example.com", field);
  }
  for (char c : a) {
    if (c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == ',' || c == ';' || c == '"' ||
        c == '(' || c == ')' || c == '\\') {
      return Status::InvalidArgument("must be a bare email address such as ops@example.com", field);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<AlertsConfig> ParseAlertsConfig(const json::value& v) {
  if (!v.is_object()) return Status::InvalidArgument("the alerts settings must be an object");
  const json::object& o = v.as_object();
  HR_RETURN_IF_ERROR(model::CheckKnownFields(o, {"smtp_url", "from", "to", "username", "password",
                                                 "starttls", "ca_file", "webhook_url", "window"}));
  AlertsConfig c;
  for (auto [field, target] :
       {std::pair{"smtp_url", &c.smtp_url}, std::pair{"from", &c.from},
        std::pair{"username", &c.username}, std::pair{"password", &c.password},
        std::pair{"ca_file", &c.ca_file}, std::pair{"webhook_url", &c.webhook_url}}) {
    const json::value* f = o.if_contains(field);
    if (!f || f->is_null()) continue;
    auto s = model::GetString(*f, field);
    if (!s.ok()) return s.status();
    if (s->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return Status::InvalidArgument("must not contain line breaks or NUL", field);
    }
    *target = *s;
  }
  if (const json::value* to = o.if_contains("to"); to && !to->is_null()) {
    if (to->is_string()) {
      c.to.emplace_back(to->as_string());
      HR_RETURN_IF_ERROR(ValidateAddress(c.to.back(), "to"));
    } else if (to->is_array()) {
      const json::array& a = to->as_array();
      for (size_t i = 0; i < a.size(); ++i) {
        std::string field = "to[" + std::to_string(i) + "]";
        auto s = model::GetString(a[i], field);
        if (!s.ok()) return s.status();
        HR_RETURN_IF_ERROR(ValidateAddress(*s, field));
        c.to.push_back(*s);
      }
    } else {
      return Status::InvalidArgument("must be an email address or an array of them", "to");
    }
  }
  if (const json::value* f = o.if_contains("starttls")) {
    auto b = model::GetBool(*f, "starttls");
    if (!b.ok()) return b.status();
    c.starttls = *b;
  }
  if (const json::value* f = o.if_contains("window")) {
    auto w = model::GetDuration(*f, "window");
    if (!w.ok()) return w.status();
    if (w->count() <= 0) return Status::InvalidArgument("must be greater than 0", "window");
    c.window = *w;
  }

  if (!c.smtp_url.empty()) {
    HR_RETURN_IF_ERROR(ValidateUrl(c.smtp_url, "smtp_url", {"smtp", "smtps"}));
    if (c.from.empty()) return Status::InvalidArgument("is required with smtp_url", "from");
    if (c.to.empty())
      return Status::InvalidArgument("needs at least one address with smtp_url", "to");
  } else if (!c.from.empty() || !c.to.empty() || !c.username.empty() || !c.password.empty()) {
    return Status::InvalidArgument("is required when from, to, username or password is set",
                                   "smtp_url");
  }
  if (!c.from.empty()) HR_RETURN_IF_ERROR(ValidateAddress(c.from, "from"));
  if (!c.password.empty() && c.username.empty()) {
    return Status::InvalidArgument("is required with password", "username");
  }
  if (!c.username.empty() && !c.starttls && !c.smtp_url.starts_with("smtps://")) {
    return Status::InvalidArgument(
        "SMTP credentials are only sent over TLS: set starttls = true, or use an smtps:// URL",
        "starttls");
  }
  if (!c.webhook_url.empty()) {
    HR_RETURN_IF_ERROR(ValidateUrl(c.webhook_url, "webhook_url", {"http", "https"}));
  }
  return c;
}

json::object AlertsConfigToJson(const AlertsConfig& c) {
  json::array to;
  for (const auto& t : c.to) to.emplace_back(t);
  return json::object{
      {"smtp_url", c.smtp_url},
      {"from", c.from},
      {"to", std::move(to)},
      {"username", c.username},
      {"password_set", !c.password.empty()},
      {"starttls", c.starttls},
      {"ca_file", c.ca_file},
      {"webhook_url", c.webhook_url},
      {"window", FormatDuration(c.window)},
  };
}

}  // namespace hookrelay::alerts
