#include "mlgo/rl/MiniBatches.h"

#include "mlgo/support/Random.h"

#include <algorithm>
#include <numeric>

namespace mlgo::rl {

std::vector<size_t> permutation(size_t n, uint64_t key) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  RandomStream rng(key);
  for (size_t i = n; i > 1; --i)
    std::swap(order[i - 1], order[rng.uniformBelow(i)]);
  return order;
}

std::vector<std::vector<size_t>> miniBatches(const std::vector<size_t>& order, size_t size) {
  std::vector<std::vector<size_t>> batches;
  for (size_t begin = 0; begin < order.size(); begin += size)
    batches.emplace_back(order.begin() + static_cast<ptrdiff_t>(begin),
                         order.begin() +
                             static_cast<ptrdiff_t>(std::min(order.size(), begin + size)));
  return batches;
}

} // namespace mlgo::rl
