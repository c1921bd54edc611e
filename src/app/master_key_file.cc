#include "app/master_key_file.h"

#include <sys/stat.h>

#include <filesystem>

#include "common/file_text.h"

namespace hookrelay::app {

namespace {

Result<LoadedMasterKey> FromFile(const std::string& path) {
  HR_ASSIGN_OR_RETURN(const std::string text, ReadFileText(path));
  HR_ASSIGN_OR_RETURN(secrets::MasterKey key, secrets::ParseMasterKey(text, path));
  LoadedMasterKey loaded{std::move(key), path, false, ""};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 0077) != 0) {
    loaded.warning = "the master key file " + path +
                     " may be read by others than its owner: " + "chmod 600 " + path;
  }
  return loaded;
}

}  // namespace

Result<LoadedMasterKey> LoadMasterKey(bool env_set, const std::string& env_key,
                                      const std::string& key_file, const std::string& data_dir) {
  if (env_set) {
    HR_ASSIGN_OR_RETURN(secrets::MasterKey key, secrets::ParseMasterKey(env_key, kMasterKeyEnv));
    return LoadedMasterKey{std::move(key), kMasterKeyEnv, false, ""};
  }
  if (!key_file.empty()) return FromFile(key_file);
  const std::string path = (std::filesystem::path(data_dir) / "master.key").string();
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return FromFile(path);
  HR_RETURN_IF_ERROR(WritePrivateFile(path, secrets::NewMasterKeyText() + "\n"));
  HR_ASSIGN_OR_RETURN(LoadedMasterKey loaded, FromFile(path));
  loaded.generated = true;
  return loaded;
}

}  // namespace hookrelay::app
