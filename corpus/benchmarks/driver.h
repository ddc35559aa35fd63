/* Shared by the C benchmark drivers (corpus/benchmarks/NAME/bench.c): the
 * whole input file in memory, and the FNV-1a hash their outputs print (it
 * depends on every byte, never on timing or addresses). */
#ifndef MLGO_BENCHMARK_DRIVER_H
#define MLGO_BENCHMARK_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fnv1a(const uint8_t *data, size_t size) {
  uint64_t hash = 14695981039346656037ULL;
  for (size_t i = 0; i < size; i++) {
    hash ^= data[i];
    hash *= 1099511628211ULL;
  }
  return hash;
}

/* The file's bytes (malloc'ed; NULL on an error), their count in *size. */
static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t capacity = 1 << 16, used = 0;
  uint8_t *data = malloc(capacity);
  while (data) {
    used += fread(data + used, 1, capacity - used, f);
    if (used < capacity) break;
    capacity *= 2;
    uint8_t *grown = realloc(data, capacity);
    if (!grown) free(data);
    data = grown;
  }
  if (ferror(f)) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = used;
  return data;
}

#endif
