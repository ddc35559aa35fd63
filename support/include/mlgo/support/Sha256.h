// SHA-256 (FIPS 180-4): the key of content-addressed caches that persist
// across builds and are shared by concurrent ones (the build-time search's),
// where FNV-1a's 64 bits (Files.h) are too few to trust a hit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace mlgo {

class Sha256 {
public:
  Sha256();
  Sha256& update(std::string_view bytes);
  // A field of a composite key: its length first, so ("ab","c") and
  // ("a","bc") hash differently.
  Sha256& field(std::string_view bytes);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex();

private:
  void block(const unsigned char* data);
  std::array<uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t length_ = 0; // bytes
};

std::string sha256Hex(std::string_view bytes);

} // namespace mlgo
