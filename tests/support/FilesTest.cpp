// Output paths: write-then-rename must never replace a device, directory or
// FIFO with a plain file.
#include "mlgo/support/Files.h"
#include "TestSupport.h"
#include "mlgo/support/Sha256.h"

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

// readFileBytes reads a file of known size in one go and still reads what
// a size does not tell: a file that reports none (/proc) and bytes with NULs.
TEST(Files, ReadsWholeFilesWhateverTheirSizeSays) {
  mlgo::testing::ScratchDirectory scratch;
  std::string bytes(3 * 4096 + 17, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 7919) % 251);
  ASSERT_TRUE(writeFileAtomically(scratch / "blob", bytes));
  Expected<std::string> read = readFileBytes(scratch / "blob");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, bytes);
  ASSERT_TRUE(writeFileAtomically(scratch / "empty", ""));
  Expected<std::string> empty = readFileBytes(scratch / "empty");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  Expected<std::string> status = readFileBytes("/proc/self/status"); // st_size 0
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_NE(status->find("Name:"), std::string::npos) << *status;
  Expected<std::string> missing = readFileBytes(scratch / "missing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("missing"), std::string::npos);
}

} // namespace
} // namespace mlgo

// FIPS 180-4's examples, and the split points update() must handle (a field
// that fills a block exactly, one that spans three).
TEST(Sha256, KnownDigests) {
  EXPECT_EQ(mlgo::sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(mlgo::sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(mlgo::sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(mlgo::sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  std::string text(200, 'x');
  mlgo::Sha256 pieces;
  pieces.update(text.substr(0, 64)).update(text.substr(64, 1)).update(text.substr(65));
  EXPECT_EQ(pieces.hex(), mlgo::sha256Hex(text));
  EXPECT_NE(mlgo::Sha256().field("ab").field("c").hex(),
            mlgo::Sha256().field("a").field("bc").hex());
}
