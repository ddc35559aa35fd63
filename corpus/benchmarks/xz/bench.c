/* xz benchmark driver (corpus/recipes/xz.sh): compresses the file given on
 * the command line with liblzma's .xz encoder at presets 1 and 6 (fast and
 * default: the match finders, the LZMA2 range coder and the CRC64 check),
 * decompresses each result and checks the round trip. Prints the compressed
 * sizes and FNV-1a hashes of the compressed and decompressed bytes: they
 * depend on every step, never on timing or addresses. Exits 1 on any error. */
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

/* One preset: encode, decode, compare; 0 on success. */
static int round_trip(uint32_t preset, const uint8_t *input, size_t size) {
  size_t bound = lzma_stream_buffer_bound(size);
  uint8_t *packed = malloc(bound);
  uint8_t *unpacked = malloc(size + 1);
  if (!packed || !unpacked) {
    fprintf(stderr, "bench-xz: out of memory\n");
    return 1;
  }
  size_t packed_size = 0;
  lzma_ret ret = lzma_easy_buffer_encode(preset, LZMA_CHECK_CRC64, NULL, input, size,
                                         packed, &packed_size, bound);
  if (ret != LZMA_OK) {
    fprintf(stderr, "bench-xz: preset %u: encoder error %d\n", (unsigned)preset, (int)ret);
    return 1;
  }
  uint64_t memlimit = UINT64_MAX;
  size_t in_pos = 0, out_pos = 0;
  ret = lzma_stream_buffer_decode(&memlimit, 0, NULL, packed, &in_pos, packed_size,
                                  unpacked, &out_pos, size + 1);
  if (ret != LZMA_OK || in_pos != packed_size || out_pos != size ||
      memcmp(unpacked, input, size) != 0) {
    fprintf(stderr, "bench-xz: preset %u: round trip failed (decoder %d, %zu of %zu bytes)\n",
            (unsigned)preset, (int)ret, out_pos, size);
    return 1;
  }
  printf("preset %u: %zu -> %zu bytes, xz fnv1a %016llx, data fnv1a %016llx\n",
         (unsigned)preset, size, packed_size, (unsigned long long)fnv1a(packed, packed_size),
         (unsigned long long)fnv1a(unpacked, out_pos));
  free(packed);
  free(unpacked);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench-xz INPUT\n");
    return 2;
  }
  size_t size;
  uint8_t *input = read_file(argv[1], &size);
  if (!input) {
    fprintf(stderr, "bench-xz: cannot read %s\n", argv[1]);
    return 1;
  }
  int failed = round_trip(1, input, size) || round_trip(6, input, size);
  free(input);
  return failed ? 1 : 0;
}
