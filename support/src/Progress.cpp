#include "mlgo/support/Progress.h"

#include <unistd.h>

namespace mlgo {

ProgressLine::ProgressLine(std::string label, size_t total, std::FILE* out)
    : label_(std::move(label)), total_(total), out_(out), interactive_(isatty(fileno(out)) != 0),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_) {}

ProgressLine::~ProgressLine() {
  finish();
}

void ProgressLine::advance(size_t by) {
  std::lock_guard lock(mutex_);
  done_ += by;
  auto now = std::chrono::steady_clock::now();
  // A TTY can take frequent redraws; a log file gets a line every 5 s.
  auto interval = interactive_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5);
  if (now - lastDraw_ >= interval) {
    lastDraw_ = now;
    draw(false);
  }
}

void ProgressLine::finish() {
  std::lock_guard lock(mutex_);
  if (finished_)
    return;
  finished_ = true;
  draw(true);
}

void ProgressLine::draw(bool final) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  double eta = rate > 0 && total_ > done_ ? static_cast<double>(total_ - done_) / rate : 0.0;
  std::fprintf(out_, "%s%s: %zu/%zu  %.1f/s  elapsed %.1fs", interactive_ ? "\r\33[2K" : "",
               label_.c_str(), done_, total_, rate, elapsed);
  if (!final)
    std::fprintf(out_, "  eta %.0fs", eta);
  if (final || !interactive_)
    std::fputc('\n', out_);
  std::fflush(out_);
}

} // namespace mlgo
