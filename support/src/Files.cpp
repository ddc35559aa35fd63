#include "mlgo/support/Files.h"

#include <atomic>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mlgo {

Expected<std::string> readFileBytes(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec))
    return makeError(file.string() + ": no such file");
  if (!fs::is_regular_file(file, ec))
    return makeError(file.string() + ": not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return makeError(file.string() + ": cannot open for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return makeError(file.string() + ": read error");
  return buffer.str();
}

Status writeFileBytes(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out)
    return makeError(file.string() + ": cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return makeError(file.string() + ": write error");
  return Status::ok();
}

Status checkReplaceable(const fs::path& file) {
  std::error_code ec;
  fs::file_status status = fs::status(file, ec);
  if (ec || !fs::exists(status) || fs::is_regular_file(status))
    return Status::ok();
  const char* what = fs::is_directory(status)        ? "a directory"
                     : fs::is_character_file(status) ? "a character device"
                     : fs::is_block_file(status)     ? "a block device"
                     : fs::is_fifo(status)           ? "a FIFO"
                     : fs::is_socket(status)         ? "a socket"
                                                     : "not a regular file";
  return makeError(file.string() + " is " + what +
                   "; the output must be a regular file (it is written aside and renamed into "
                   "place)");
}

Status writeFileAtomically(const fs::path& file, std::string_view bytes) {
  if (Status replaceable = checkReplaceable(file); !replaceable)
    return replaceable;
  static std::atomic<uint64_t> counter{0};
  fs::path temporary = file;
  temporary += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  std::error_code ignored;
  if (Status written = writeFileBytes(temporary, bytes); !written) {
    fs::remove(temporary, ignored);
    return written;
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec) {
    fs::remove(temporary, ignored);
    return makeError(file.string() + ": cannot replace: " + ec.message());
  }
  return Status::ok();
}

} // namespace mlgo
