// Checks for integer flags whose messages say what is wanted: CLI11's
// PositiveNumber says "Value 0 not in range 0.000000 to 1797693…", and an
// unsigned option silently turns -1 into 18446744073709551615.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

namespace mlgo::apps {

inline CLI::Validator wholeNumberFrom(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& value) -> std::string {
        long long number = 0;
        auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (error != std::errc() || end != value.data() + value.size() || number < minimum)
          return "must be a whole number of at least " + std::to_string(minimum) + " (got " +
                 value + ")";
        return {};
      },
      "INT>=" + std::to_string(minimum));
}

inline const CLI::Validator kAtLeastOne = wholeNumberFrom(1);
inline const CLI::Validator kAtLeastZero = wholeNumberFrom(0);

} // namespace mlgo::apps
