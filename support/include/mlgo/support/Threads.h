#pragma once

#include <cstddef>
#include <thread>

namespace mlgo {

// The number of hardware threads (at least 1): the default worker count.
inline size_t hardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

} // namespace mlgo
