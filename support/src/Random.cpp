#include "mlgo/support/Random.h"

#include <cassert>

namespace mlgo {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t deriveKey(std::initializer_list<uint64_t> parts) {
  uint64_t key = 0x6a09e667f3bcc909ULL;
  for (uint64_t part : parts)
    key = mix64(key ^ mix64(part));
  return key;
}

uint64_t RandomStream::next() {
  state_ += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t RandomStream::uniformBelow(uint64_t bound) {
  assert(bound > 0);
  uint64_t x = next();
  __uint128_t m = static_cast<__uint128_t>(x) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    uint64_t threshold = -bound % bound;
    while (low < threshold) {
      x = next();
      m = static_cast<__uint128_t>(x) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double RandomStream::uniform01() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

} // namespace mlgo
