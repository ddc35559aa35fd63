// Seeded orders over recorded decisions: the permutations and mini-batches
// BC's epochs and PPO's updates pass over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlgo::rl {

// A uniformly random permutation of 0..n-1 (Fisher–Yates on RandomStream),
// a function of `key` alone.
std::vector<size_t> permutation(size_t n, uint64_t key);

// The rows of every mini-batch of one pass over `order`: consecutive slices
// of `size` (the last may be shorter).
std::vector<std::vector<size_t>> miniBatches(const std::vector<size_t>& order, size_t size);

} // namespace mlgo::rl
