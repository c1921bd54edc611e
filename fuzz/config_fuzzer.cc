// Fuzzes config loading: app::ParseConfig on arbitrary TOML text. It must return a Status for
// every input (never throw or crash); errors name the file; an accepted config's catalog is
// consistent (Catalog::Validate) and every destination's policy and breaker validate.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "app/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string name = "fuzz.toml";
  hookrelay::Result<hookrelay::app::Config> c = hookrelay::app::ParseConfig(text, name);
  if (!c.ok()) {
    if (c.status().message().rfind(name, 0) != 0) {
      std::fprintf(stderr, "config_fuzzer: error does not start with the file name: %s\n",
                   c.status().ToString().c_str());
      std::abort();
    }
    return 0;
  }
  if (hookrelay::Status st = c->catalog.Validate(); !st.ok()) {
    std::fprintf(stderr, "config_fuzzer: accepted catalog does not validate: %s\n",
                 st.ToString().c_str());
    std::abort();
  }
  for (const auto& [dest_name, dest] : c->catalog.destinations) {
    hookrelay::Status st = dest.policy.Validate();
    if (st.ok()) st = dest.breaker.Validate();
    if (!st.ok()) {
      std::fprintf(stderr, "config_fuzzer: destination %s is invalid: %s\n", dest_name.c_str(),
                   st.ToString().c_str());
      std::abort();
    }
  }
  return 0;
}
