#include "catalog/tls_files.h"

#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hookrelay::catalog {

namespace json = boost::json;

namespace {

constexpr uintmax_t kMaxFile = 1 << 20;

Result<std::string> ReadPemFile(const std::string& given, const std::string& base_dir,
                                const std::string& field) {
  if (given.empty()) return Status::InvalidArgument("names no file after '@'", field);
  if (given.size() > 4096) {
    return Status::InvalidArgument("is not PEM text (\"-----BEGIN …\") and too long for a path",
                                   field);
  }
  std::filesystem::path path(given);
  if (path.is_relative()) {
    if (base_dir.empty()) {
      return Status::InvalidArgument(
          "\"" + given + "\" is a relative path; through the API give an absolute path on the " +
              "hookrelay host, or the PEM text itself",
          field);
    }
    path = std::filesystem::path(base_dir) / path;
  }
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) {
    return Status::InvalidArgument("cannot read " + path.string() + ": " + ec.message(), field);
  }
  if (status.type() == std::filesystem::file_type::not_found) {
    return Status::InvalidArgument("cannot read " + path.string() + ": No such file or directory",
                                   field);
  }
  if (!std::filesystem::is_regular_file(status)) {
    return Status::InvalidArgument("cannot read " + path.string() + ": not a regular file", field);
  }
  if (std::filesystem::file_size(path, ec) > kMaxFile || ec) {
    return Status::InvalidArgument("cannot read " + path.string() + ": larger than 1 MiB", field);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument("cannot read " + path.string() + ": " + std::strerror(errno),
                                   field);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::InvalidArgument("cannot read " + path.string(), field);
  // Said here, with the path: later checks see only the text (and never quote it).
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return Status::InvalidArgument(path.string() + " holds no PEM (\"-----BEGIN …\" lines)", field);
  }
  return text.str();
}

}  // namespace

Status InlineTlsFiles(json::value& destination, const std::string& base_dir) {
  json::object* o = destination.if_object();
  if (o == nullptr) return Status::Ok();
  json::value* tls = o->if_contains("tls");
  if (tls == nullptr || !tls->is_object()) return Status::Ok();
  for (const char* name : {"client_cert", "client_key", "ca_file"}) {
    json::value* v = tls->as_object().if_contains(name);
    if (v == nullptr || !v->is_string()) continue;
    const std::string value(v->as_string());
    std::string path;
    if (!value.empty() && value[0] == '@') {
      path = value.substr(1);
    } else if (std::string_view(name) == "ca_file" && !value.empty() &&
               value.find("-----BEGIN ") == std::string::npos) {
      path = value;  // the contract's "ca_file": "ca.pem"
    } else {
      continue;
    }
    auto text = ReadPemFile(path, base_dir, "tls." + std::string(name));
    if (!text.ok()) return text.status();
    *v = json::string(*text);
  }
  return Status::Ok();
}

}  // namespace hookrelay::catalog
