// Helpers shared by the results tests: a scratch directory per test and
// readable failure messages for Expected/Status.
#pragma once

#include "mlgo/support/Expected.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace mlgo::results::testing {

template <class T> std::string messageOf(const Expected<T>& value) {
  return value ? std::string() : value.error().message;
}
inline std::string messageOf(const Status& status) {
  return status ? std::string() : status.error().message;
}

// A fresh directory for the running test, removed afterwards.
class ScratchDirectoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    directory_ = std::filesystem::temp_directory_path() /
                 ("mlgo-results-" + std::to_string(::getpid()) + "-" + info->test_suite_name() +
                  "-" + info->name());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(directory_, ec);
  }
  std::filesystem::path file(const std::string& name) const { return directory_ / name; }

  std::filesystem::path directory_;
};

} // namespace mlgo::results::testing
