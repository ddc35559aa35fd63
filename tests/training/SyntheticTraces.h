// Synthetic trace files for the trainer tests: decisions over the rl tests'
// made-up features, labelled by a function of them.
#pragma once

#include "RlTestSupport.h"
#include "mlgo/results/TraceFile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace mlgo::rl::testing {

// A synthetic trace: `modules` modules of `perModule` decisions each over
// syntheticSpecs(), labelled (inlining_default) by `label(a, b, c)`. With
// `labelOnlyActions`, the label is the action taken and the default decision
// is always 0, as in a trace of a policy that overrides the heuristic.
template <class Label>
void writeSyntheticTrace(const std::filesystem::path& path, size_t modules, size_t perModule,
                         uint64_t seed, Label label, const std::string& prefix = "m",
                         bool labelOnlyActions = false) {
  Expected<results::TraceWriter> writer =
      results::TraceWriter::create(path, syntheticSpecs(), {{"policy", "synthetic"}});
  ASSERT_TRUE(writer) << writer.error().message;
  RandomStream rng(seed);
  for (size_t m = 0; m < modules; ++m) {
    results::TraceModule outcome;
    outcome.name = prefix + std::to_string(m);
    outcome.status = results::kTraceStatusOk;
    outcome.sizeBytes = 1000 + m;
    outcome.baselineBytes = 1000;
    outcome.reward = 0;
    policies::Trajectory t;
    t.featureSpecs = syntheticSpecs();
    t.width = 4;
    for (size_t d = 0; d < perModule; ++d) {
      double a = static_cast<double>(rng.uniformBelow(1000));
      double b = static_cast<double>(rng.uniformBelow(1000));
      double c = static_cast<double>(rng.uniformBelow(20));
      int64_t y = label(a, b, c);
      if (y < 0) { // the label function rejects the sample: draw again
        --d;
        continue;
      }
      const int64_t heuristic = labelOnlyActions ? 0 : y;
      t.observations.insert(t.observations.end(), {a, b, c, static_cast<double>(heuristic)});
      t.defaultDecisions.push_back(heuristic);
      t.actions.push_back(y);
      t.logProbabilities.push_back(0);
    }
    Status added = writer->addModule(outcome, &t);
    ASSERT_TRUE(added) << added.error().message;
  }
  ASSERT_TRUE(writer->close());
}

} // namespace mlgo::rl::testing
