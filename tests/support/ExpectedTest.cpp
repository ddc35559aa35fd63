// The early-return helpers: the value passes, the first error returns, and
// nothing after it runs.
#include "mlgo/support/Expected.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlgo {
namespace {

Expected<int> parsed(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return makeError("\"" + text + "\" is not a number");
  return std::stoi(text);
}

Expected<int> sum(const std::string& a, const std::string& b, std::vector<std::string>& ran) {
  MLGO_ASSIGN_OR_RETURN(const int first, parsed(a));
  ran.push_back("first");
  MLGO_ASSIGN_OR_RETURN(const int second, parsed(b));
  ran.push_back("second");
  return first + second;
}

Status check(bool fine, std::vector<std::string>& ran) {
  MLGO_TRY(fine ? Status::ok() : Status(makeError("not fine")));
  ran.push_back("after");
  return Status::ok();
}

TEST(Expected, AssignOrReturnPassesTheValueAndReturnsTheFirstError) {
  std::vector<std::string> ran;
  Expected<int> ok = sum("12", "30", ran);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 42);
  EXPECT_EQ(ran, (std::vector<std::string>{"first", "second"}));
  ran.clear();
  Expected<int> bad = sum("12", "x", ran);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "\"x\" is not a number");
  EXPECT_EQ(ran, std::vector<std::string>{"first"});
  ran.clear();
  EXPECT_FALSE(sum("", "1", ran));
  EXPECT_TRUE(ran.empty());
}

TEST(Expected, TryReturnsAStatusError) {
  std::vector<std::string> ran;
  EXPECT_TRUE(check(true, ran));
  EXPECT_EQ(ran.size(), 1u);
  Status failed = check(false, ran);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "not fine");
  EXPECT_EQ(ran.size(), 1u);
}

} // namespace
} // namespace mlgo
