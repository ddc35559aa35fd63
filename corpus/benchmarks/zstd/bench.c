/* zstd benchmark driver (corpus/recipes/zstd.sh): compresses the file given
 * on the command line with libzstd's one-shot API at levels 3 (the default:
 * double-fast matching) and 9 (lazy2 matching), decompresses each frame and
 * checks the round trip. Prints the compressed sizes and FNV-1a hashes of the
 * compressed and decompressed bytes: they depend on every step, never on
 * timing or addresses. Exits 1 on any error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include <zstd.h>

/* One level: compress, decompress, compare; 0 on success. */
static int round_trip(int level, const uint8_t *input, size_t size) {
  size_t bound = ZSTD_compressBound(size);
  uint8_t *packed = malloc(bound);
  uint8_t *unpacked = malloc(size + 1);
  if (!packed || !unpacked) {
    fprintf(stderr, "bench-zstd: out of memory\n");
    return 1;
  }
  size_t packed_size = ZSTD_compress(packed, bound, input, size, level);
  if (ZSTD_isError(packed_size)) {
    fprintf(stderr, "bench-zstd: level %d: %s\n", level, ZSTD_getErrorName(packed_size));
    return 1;
  }
  unsigned long long content = ZSTD_getFrameContentSize(packed, packed_size);
  size_t unpacked_size = ZSTD_decompress(unpacked, size + 1, packed, packed_size);
  if (ZSTD_isError(unpacked_size) || content != size || unpacked_size != size ||
      memcmp(unpacked, input, size) != 0) {
    fprintf(stderr, "bench-zstd: level %d: round trip failed (%s)\n", level,
            ZSTD_isError(unpacked_size) ? ZSTD_getErrorName(unpacked_size) : "data differs");
    return 1;
  }
  printf("level %d: %zu -> %zu bytes, zst fnv1a %016llx, data fnv1a %016llx\n", level, size,
         packed_size, (unsigned long long)fnv1a(packed, packed_size),
         (unsigned long long)fnv1a(unpacked, unpacked_size));
  free(packed);
  free(unpacked);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench-zstd INPUT\n");
    return 2;
  }
  size_t size;
  uint8_t *input = read_file(argv[1], &size);
  if (!input) {
    fprintf(stderr, "bench-zstd: cannot read %s\n", argv[1]);
    return 1;
  }
  int failed = round_trip(3, input, size) || round_trip(9, input, size);
  free(input);
  return failed ? 1 : 0;
}
