#include "mlgo/training/Options.h"

#include "mlgo/support/OptionSchema.h"

#include <cmath>

#include "mlgo/support/Files.h"
#include <string>

namespace mlgo::training {

Error inGroup(std::string_view group, const Error& error) {
  return makeError(std::string(group) + "." + error.message);
}

Status validateGroups(std::initializer_list<std::pair<std::string_view, Status>> groups) {
  for (const auto& [group, status] : groups)
    if (!status)
      return inGroup(group, status.error());
  return Status::ok();
}

Status CorpusOptions::validate() const {
  if (corpus.empty() && programs.empty())
    return makeError("corpus: no training corpus (or programs) given");
  if (!corpus.empty() && !programs.empty())
    return makeError("programs: a run trains on a corpus or on programs, not both");
  if (validationCorpus && trainsOnPrograms())
    return makeError("validationCorpus: programs are validated on programs "
                     "(validationPrograms), not a corpus");
  if (!validationPrograms.empty() && !trainsOnPrograms())
    return makeError("validationPrograms: only with programs to train on");
  if (verifyProgramBuilds && !trainsOnPrograms())
    return makeError("verifyProgramBuilds: only with programs to train on");
  if (programWorkload != "full" && programWorkload != "tiny")
    return makeError("programWorkload: full or tiny, got '" + programWorkload + "'");
  if (validationInterval < 1)
    return makeError("validationInterval: must be at least 1, got " +
                     std::to_string(validationInterval));
  if (modulesPerStep < 1)
    return makeError("modulesPerStep: must be at least 1");
  return Status::ok();
}

Status PolicyStartOptions::validate() const {
  if (vocabularyQuantiles < 2)
    return makeError("vocabularyQuantiles: must be at least 2, got " +
                     std::to_string(vocabularyQuantiles));
  if (Status s = mlp.validate(); !s)
    return makeError("mlp." + s.error().message);
  return Status::ok();
}

Status RunOptions::validate(bool policyFile) const {
  if (steps < 1)
    return makeError("steps: must be at least 1, got " + std::to_string(steps));
  if (!(maxSeconds >= 0) || !std::isfinite(maxSeconds))
    return makeError("maxSeconds: must be a finite number >= 0, got " + std::to_string(maxSeconds));
  if (snapshotInterval < 1)
    return makeError("snapshotInterval: must be at least 1, got " +
                     std::to_string(snapshotInterval));
  if (output.empty())
    return makeError("output: no run file given");
  if (policyFile && !policyOutput)
    return makeError("policyOutput: no policy file given");
  if (policyOutput && policyOutput->empty())
    return makeError("policyOutput: empty path");
  if (threads < 1)
    return makeError("threads: must be at least 1");
  // Before any compilation: a device or directory here fails only at the end
  // of the first step otherwise.
  if (Status s = checkReplaceable(output); !s)
    return makeError("output: " + s.error().message);
  if (policyOutput)
    if (Status s = checkReplaceable(*policyOutput); !s)
      return makeError("policyOutput: " + s.error().message);
  return Status::ok();
}

OptionSchema<CorpusOptions> CorpusOptions::schema(const StepNames& names) {
  OptionSchema<CorpusOptions> s;
  s.value(
      "corpus", "Training corpus (merge several code bases)",
      [](auto& o) -> auto& { return o.corpus; });
  s.value(
      "validation-corpus",
      "Held-out corpus, compiled with the argmax policy every validation interval; the best "
      "policy is chosen on it",
      [](auto& o) -> auto& { return o.validationCorpus; });
  s.value(
      "validation-interval", "Validate every N " + names.unit + "s",
      [](auto& o) -> auto& { return o.validationInterval; });
  s.value(
       names.modulesFlag, "Modules compiled per " + names.unit,
       [](auto& o) -> auto& { return o.modulesPerStep; })
      .atLeast(1);
  s.choice(
      "module-sampling", "How the " + names.unit + "'s modules are drawn",
      [](auto& o) -> auto& { return o.sampling; },
      {corpus::SamplingStrategy::WithReplacement, corpus::SamplingStrategy::WithoutReplacement,
       corpus::SamplingStrategy::BucketRoundRobin, corpus::SamplingStrategy::LanguageStratified},
      corpus::samplingStrategyName);
  s.value(
       "programs",
       "Benchmark programs to train on in place of --corpus: each a job built through mlgo-cc "
       "and rewarded by its run cost under cachegrind (NAME or NAME-O2; docs/run-cost.md)",
       [](auto& o) -> auto& { return o.programs; })
      .delimiter(',');
  s.value(
       "validation-programs",
       "Held-out benchmark programs (with --programs); the best policy is chosen by their run "
       "cost",
       [](auto& o) -> auto& { return o.validationPrograms; })
      .delimiter(',');
  s.value(
      "program-workload", "The programs' workload: full | tiny (tests)",
      [](auto& o) -> auto& { return o.programWorkload; });
  s.flag(
      "verify-program-builds",
      "With --programs: every build the run-cost cache would serve is made again and must "
      "give the same programs byte for byte (as mlgo-eval run-cost --verify-builds; slow)",
      [](auto& o) -> auto& { return o.verifyProgramBuilds; });
  return s;
}

OptionSchema<PolicyStartOptions> PolicyStartOptions::schema(bool offerInitialPolicy) {
  OptionSchema<PolicyStartOptions> s;
  if (offerInitialPolicy)
    s.value(
        "initial-policy",
        "Start from this MLP policy file (e.g. from bc-train); default: random MLP",
        [](auto& o) -> auto& { return o.initialPolicy; });
  s.value(
      "vocabulary",
      "Quantile vocabulary (.buckets directory) for a random start; default: built from the "
      "training data's decisions",
      [](auto& o) -> auto& { return o.vocabulary; });
  s.value(
      "vocabulary-quantiles", "Quantiles per feature when the vocabulary is built here",
      [](auto& o) -> auto& { return o.vocabularyQuantiles; });
  s.include(
      policies::MlpOptions::schema(), [](auto& o) -> auto& { return o.mlp; });
  return s;
}

std::filesystem::path RunOptions::policyBeside(const std::filesystem::path& output) {
  std::filesystem::path beside = std::filesystem::path(output).replace_extension(".json");
  if (beside == output)
    beside += ".policy.json";
  return beside;
}

OptionSchema<RunOptions> RunOptions::schema(const StepNames& names, bool policyFile) {
  OptionSchema<RunOptions> s;
  s.value(
      names.stepsFlag, names.stepsHelp, [](auto& o) -> auto& { return o.steps; });
  s.value(
      "seed", names.seedHelp, [](auto& o) -> auto& { return o.seed; });
  s.value(
       "max-seconds",
       "Wall-clock budget of this invocation: the " + names.unit +
           " expected to end past it is the run's last (validated, policy written; --resume "
           "continues); 0: none",
       [](auto& o) -> auto& { return o.maxSeconds; })
      .atLeast(0);
  s.value(
       "output", "The run's HDF5 file", [](auto& o) -> auto& { return o.output; })
      .shortName("o");
  if (policyFile) {
    s.value(
         "policy-output",
         "The final policy file (for mlgo-eval and --initial-policy); default: the run "
         "file's path with .json",
         [](auto& o) -> auto& { return o.policyOutput; })
        .defaultNote("beside -o");
    s.finish([](RunOptions& o, const auto& given) {
      if (!given.contains("policy-output"))
        o.policyOutput = policyBeside(o.output);
    });
  }
  s.value(
      "snapshot-interval", "Store the policy every N " + names.unit + "s",
      [](auto& o) -> auto& { return o.snapshotInterval; });
  return s;
}

} // namespace mlgo::training
