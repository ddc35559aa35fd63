// Test hooks of the in-process worker: MLGO_WORKER_FAULT names a fault the
// tests make a real worker commit, so the paths that catch it run for real
// (see Worker.cpp for the faults that name a module).
#pragma once

#include <cstdlib>
#include <string_view>

namespace mlgo::inprocess {

// Whether MLGO_WORKER_FAULT is exactly `fault` (e.g. "wrong-trial").
inline bool workerFault(std::string_view fault) {
  const char* set = std::getenv("MLGO_WORKER_FAULT");
  return set && fault == set;
}

} // namespace mlgo::inprocess
