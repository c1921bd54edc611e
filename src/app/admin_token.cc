#include "app/admin_token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/crypto.h"

namespace hookrelay::app {

bool AdminToken::Check(std::string_view presented) const {
  if (presented.empty()) return false;
  return ConstantTimeEqual(HexEncode(Sha256(presented)), sha256_hex_);
}

bool AdminToken::CheckAuthorizationHeader(std::string_view value) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (value.size() <= kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return false;
    }
  }
  return Check(value.substr(kBearer.size()));
}

namespace {

Status WriteHash(const std::string& path, const std::string& hash) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return Status::Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  std::string line = hash + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::Unavailable("cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Result<AdminToken> SetUpAdminToken(const std::string& dir, const std::string& env_token,
                                   std::ostream& out) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/admin-token.sha256";
  if (!env_token.empty()) {
    if (env_token.size() < 16) {
      return Status::InvalidArgument("HOOKRELAY_ADMIN_TOKEN must be at least 16 characters");
    }
    std::string hash = HexEncode(Sha256(env_token));
    HR_RETURN_IF_ERROR(WriteHash(path, hash));
    out << "Admin token: from HOOKRELAY_ADMIN_TOKEN\n";
    return AdminToken(hash);
  }
  std::ifstream in(path);
  std::string stored;
  if (in >> stored && stored.size() == 64) {
    out << "Admin token: set on first start (its hash is in " << path
        << "); set HOOKRELAY_ADMIN_TOKEN to replace it\n";
    return AdminToken(stored);
  }
  std::string token = "hr_" + RandomHexToken(24);
  std::string hash = HexEncode(Sha256(token));
  HR_RETURN_IF_ERROR(WriteHash(path, hash));
  out << "Admin token (shown once, keep it; only its hash is stored): " << token << "\n";
  return AdminToken(hash);
}

}  // namespace hookrelay::app
