// Every tool writes files (run files, traces, corpora, exports, policies).
// Past a file-size limit (ulimit -f, RLIMIT_FSIZE) the kernel sends SIGXFSZ,
// which by default kills the process without a word and leaves its
// temporaries, locks and scratch directories behind. Ignored, the write
// fails with EFBIG instead, and the tools' write errors name the file and
// what was kept. Children (clang, workers) get the default back (Process.cpp).
#pragma once

#include <csignal>

namespace mlgo::apps {

inline void reportFileSizeLimitsAsWriteErrors() {
  std::signal(SIGXFSZ, SIG_IGN);
}

} // namespace mlgo::apps
