// Deterministic, platform-independent random streams. Every stream is derived
// from explicit integers (seed, step, index, …), never from a clock, so that
// any worker or a resumed run regenerates exactly the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace mlgo {

// SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
uint64_t mix64(uint64_t x);

// Folds several integers into one 64-bit key, order-sensitive.
uint64_t deriveKey(std::initializer_list<uint64_t> parts);

// A small, fast generator (SplitMix64 stream). Its output is defined by this
// code alone, unlike std:: distributions whose results differ between
// standard libraries.
class RandomStream {
public:
  explicit RandomStream(uint64_t key) : state_(key) {}
  uint64_t next();
  // Uniform in [0, bound), bound > 0, without modulo bias (Lemire's method).
  uint64_t uniformBelow(uint64_t bound);
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();

private:
  uint64_t state_;
};

} // namespace mlgo
