// Progress for long work on the terminal: a single line redrawn in place on a
// TTY, or a line every few seconds when output goes to a file or CI log.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace mlgo {

class ProgressLine {
public:
  ProgressLine(std::string label, size_t total, std::FILE* out = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Thread-safe; cheap when nothing needs to be drawn.
  void advance(size_t by = 1);
  void finish();

private:
  void draw(bool final);

  std::string label_;
  size_t total_;
  size_t done_ = 0;
  std::FILE* out_;
  bool interactive_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point lastDraw_;
  std::mutex mutex_;
};

} // namespace mlgo
