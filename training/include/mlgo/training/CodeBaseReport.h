// How a policy does against -Oz on whole code bases, the way a user judges
// it: total .text per code base, how many modules got smaller or larger, and
// the largest regressions. The code bases come from a split file that fixes
// which recipe code bases train, validate and test a policy
// (configs/inlining-split.toml), so that a policy is judged on code it never
// trained or was selected on.
#pragma once

#include "mlgo/corpus/Corpus.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/support/Expected.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::training {

// Which code bases train, validate and test. A code base is a recipe name
// (its corpus is <corpora dir>/NAME/corpus) or a corpus directory (a name
// with a '/').
struct CodeBaseSplit {
  std::vector<std::string> train;
  std::vector<std::string> validation;
  std::vector<std::string> test;

  // The TOML file: `train`, `validation` and `test`, each an array of names.
  // Errors name the file and the key: a syntax error, an unknown key, a
  // value that is not an array of non-empty strings, an empty test set, a
  // code base in two sets.
  static Expected<CodeBaseSplit> read(const std::filesystem::path& file);
  // "train", "validation" or "test".
  Expected<std::vector<std::string>> set(std::string_view name) const;
};

// Where a code base's corpus is: NAME -> corporaDir/NAME/corpus; a path is
// taken as it is.
std::filesystem::path codeBaseCorpus(const std::string& codeBase,
                                     const std::filesystem::path& corporaDir);

// Values are in the task's measure (lower is better): .text bytes, or the
// RegAllocScore for the eviction task.
struct ModuleDelta {
  std::string module;
  double baseline = 0;
  double policy = 0;
  double delta() const { return policy - baseline; }
};

struct CodeBaseReport {
  std::string name;
  // What the values are, for the table's headers.
  evaluators::Measure measure = evaluators::Measure::TextSize;
  std::string baselineName = "-Oz";
  // The values count each COMDAT group once across the code base
  // (countComdatOnce), not once per object.
  bool comdatOnce = false;
  size_t modules = 0;
  size_t failed = 0; // compile failures and modules without a baseline
  // Over the modules that compiled both ways.
  double baseline = 0;
  double policy = 0;
  size_t smaller = 0; // better: smaller measure
  size_t larger = 0;
  size_t same = 0;
  // Behind the guard (best of policy and baseline per module) or a best of
  // alternatives: the policy's own total as well, so a report says what the
  // policy does alone.
  std::optional<double> policyAlone;
  // The modules that grew most, largest first (ties by name).
  std::vector<ModuleDelta> largestRegressions;

  // (policy / baseline − 1) × 100; 0 for an empty code base.
  double deltaPercent() const;
  // The same for the policy alone, when the report is behind the guard.
  std::optional<double> aloneDeltaPercent() const;
};

// Candidate `candidate` of `result` over `modules` (the request's modules,
// in order) as one code base, in the result's measure against the baseline
// named `baselineName`; keeps up to `regressions` largest regressions.
// `bestOf`: each module counts the smaller of the policy's and the
// baseline's measure, as `mlgo-cc --mlgo-best-of` builds it (every object
// compiled both ways, the smaller kept).
// `alternatives`: candidates of `result` of which each module counts the
// smallest too (with `candidate`'s, and the baseline's with `bestOf`), as
// `mlgo-cc --mlgo-best-of-set` builds a pipeline choice (every alternative
// of its set compiled, the smallest kept); one that failed is passed over.
CodeBaseReport summariseCodeBase(std::string name, const evaluators::EvaluationResult& result,
                                 size_t candidate,
                                 std::span<const corpus::ModuleSpec* const> modules,
                                 size_t regressions, std::string baselineName = "-Oz",
                                 bool bestOf = false, std::span<const size_t> alternatives = {});

// The object a build keeps of each module, as `mlgo-cc` chooses: candidate
// `candidate`'s; with `bestOf`, also the baseline's, and each of
// `alternatives` (--mlgo-best-of-set), the one with the least .text (the
// first on ties, in that order). The returned result's candidate 0 is the
// kept object, candidate 1 `candidate`'s own (the policy alone); a kept
// baseline becomes a job (size, code hash, COMDAT groups, measure).
evaluators::EvaluationResult keptObjects(const evaluators::EvaluationResult& result,
                                         size_t candidate, bool bestOf,
                                         std::span<const size_t> alternatives);

// Each candidate's objects, and the baselines', as one linked build (mlgo-eval
// report --linked): an inline function or template instance that every
// object using it emits in a COMDAT group is kept once, from the first
// module in order that holds it, as a linker keeps the first copy it meets.
// Every Ok job's and baseline's measure becomes the module's code outside
// groups plus the groups it is the first to hold, so that a code base's
// total is exactly what a linker keeps of those objects (in module order)
// and a module that stops holding a group hands it to the next holder.
// Rewards follow. Text size only; every module's groups must be known
// (EvaluatorOptions::comdat): the error names the first module without them.
Status countComdatOnce(evaluators::EvaluationResult& result,
                       std::span<const corpus::ModuleSpec* const> modules);

// A percent change as reports print it: "+0.123 %".
std::string percentText(double value);

// All code bases summed (regressions merged, still the largest first).
CodeBaseReport totalOf(std::span<const CodeBaseReport> reports, size_t regressions);

// A Markdown table, one row per code base and a total row, then the largest
// regressions of each code base that has any.
std::string formatReportMarkdown(std::span<const CodeBaseReport> reports, std::string_view title);

// A report's values as a file the tools read back (`mlgo-eval report
// --values`): a header line naming the measure and baseline, then one
// tab-separated line per code base (name, modules, failed, baseline, policy,
// smaller, larger, same; values printed exactly). Regressions are not kept.
Status writeReportValues(std::span<const CodeBaseReport> reports,
                         const std::filesystem::path& file);
// Errors name the file and line.
Expected<std::vector<CodeBaseReport>> readReportValues(const std::filesystem::path& file);

// The rule that picks the policy to ship among candidates judged on the same
// validation code bases: a candidate is eligible when no code base measures
// more than the baseline; among the eligible, the smallest total wins (ties:
// the first). nullopt when none is eligible (ship the baseline).
std::optional<size_t> chooseCandidate(std::span<const std::vector<CodeBaseReport>> candidates);
// The code bases that measure more than the baseline, as "name +0.123 %".
std::vector<std::string> codeBasesAboveBaseline(std::span<const CodeBaseReport> reports);
// One sentence on the reports' total: "−0.153 % total .text vs -Oz, smaller
// than -Oz; no code base above -Oz" (or "code bases above -Oz: lua +0.2 %").
std::string reportVerdict(std::span<const CodeBaseReport> reports);

} // namespace mlgo::training
