#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "store/open_store.h"
#include "store/store.h"

namespace hookrelay::testing {

// Opens the data directory a server wrote, through the Store API, as serve does (the server must
// be stopped or killed: the directory is locked while one runs).
inline std::unique_ptr<store::Store> OpenStoreAt(const std::string& dir) {
  auto s = store::OpenStore(dir, SystemClock::Instance());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

}  // namespace hookrelay::testing
