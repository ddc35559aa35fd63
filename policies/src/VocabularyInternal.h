// Internal: the search behind normalizedQuantile, shared with the MLP's
// encoder.
#pragma once

#include <cstddef>
#include <span>

namespace mlgo::policies::detail {

// The number of elements of `sorted` (non-empty, non-decreasing) that are
// <= value: std::upper_bound's position, found without branches.
size_t countAtOrBelow(std::span<const double> sorted, double value);

} // namespace mlgo::policies::detail
