// The schema type's name, for headers that only declare an Options struct's
// schema() (support/OptionSchema.h has the definition).
#pragma once

namespace mlgo {
template <class Options> class OptionSchema;
} // namespace mlgo
