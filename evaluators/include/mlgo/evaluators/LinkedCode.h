// What a linker keeps of a code base's code, module by module. An inline
// function or template instance is emitted, in a COMDAT group, into every
// object that uses it, and the linker keeps the first copy it meets; summed
// per object, C++ code counts those copies many times (docs/pass-pipeline.md,
// "What a linker keeps"). The text-linked measure charges each module the
// code it adds to the linked program, against every other module of its code
// base at its baseline: its code outside groups, plus, for each group it
// holds or held, how the kept copy changes.
#pragma once

#include "mlgo/evaluators/ObjectCode.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace mlgo::evaluators {

class ComdatCensus {
public:
  // The code base's baseline objects' groups, in module (link) order.
  explicit ComdatCensus(std::span<const std::vector<ComdatCode>> baselines);

  // Module `position`'s object (`bytes` of code, `comdat` of it in groups)
  // with every other module at its baseline: its code outside groups; a
  // group it holds counts fully when no other module before it holds it
  // (its copy is the one kept; less the copy it displaces, when a later
  // module held the kept one), else nothing; a group it held first and no
  // longer holds counts the next holder's copy, now kept in its place. At
  // the baselines the values add up to the linked code exactly, and one
  // module's change moves the code base's linked total by exactly the
  // change of its value.
  double linkedValue(size_t position, uint64_t bytes, std::span<const ComdatCode> comdat) const;
  size_t modules() const { return baselines_.size(); }

private:
  struct Holder {
    uint32_t position;
    uint64_t bytes;
  };
  std::vector<std::vector<ComdatCode>> baselines_;
  // Each group's baseline holders, in module order.
  std::unordered_map<uint64_t, std::vector<Holder>> holders_;
};

} // namespace mlgo::evaluators
