// Output paths: write-then-rename must never replace a device, directory or
// FIFO with a plain file.
#include "mlgo/support/Files.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace mlgo {
namespace {

TEST(Files, AtomicWritesRefuseTargetsThatAreNotRegularFiles) {
  mlgo::testing::ScratchDirectory scratch;
  ASSERT_EQ(::mkfifo((scratch / "fifo").c_str(), 0600), 0);
  std::filesystem::create_directory(scratch / "dir");
  for (const auto& [path, what] :
       {std::pair{std::filesystem::path("/dev/null"), "a character device"},
        std::pair{std::filesystem::path("/dev/full"), "a character device"},
        std::pair{scratch / "fifo", "a FIFO"}, std::pair{scratch / "dir", "a directory"}}) {
    Status written = writeFileAtomically(path, "data");
    ASSERT_FALSE(written) << path;
    EXPECT_NE(written.error().message.find(path.string() + " is " + what), std::string::npos)
        << written.error().message;
  }
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_TRUE(std::filesystem::is_fifo(scratch / "fifo"));
  EXPECT_TRUE(writeFileAtomically(scratch / "file", "data"));
  EXPECT_TRUE(writeFileAtomically(scratch / "file", "again")); // a regular file is replaced
}

} // namespace
} // namespace mlgo
