#include "mlgo/training/TrainingModules.h"

namespace mlgo::training {

Expected<TrainingModules> prepareTrainingModules(evaluators::Evaluator& evaluator,
                                                 const corpus::Corpus& training,
                                                 const corpus::Corpus* validation,
                                                 results::RunRecord& record) {
  TrainingModules modules;
  std::vector<const corpus::ModuleSpec*> all;
  for (const corpus::ModuleSpec& m : training.modules())
    all.push_back(&m);
  std::vector<evaluators::BaselineResult> baselines = evaluator.baselines(all);
  record.moduleNames.clear();
  record.baselineSizes.clear();
  for (size_t i = 0; i < all.size(); ++i) {
    record.moduleNames.push_back(all[i]->name);
    record.baselineSizes.push_back(baselines[i].sizeBytes.value_or(0));
    if (!baselines[i].sizeBytes) {
      record.failures.push_back(
          {-1, -1, all[i]->name, "baseline-unavailable", baselines[i].message, ""});
      continue;
    }
    modules.eligible.push_back(all[i]);
    modules.eligibleIndex.push_back(static_cast<int64_t>(i));
    modules.eligibleBitcodeBytes.push_back(all[i]->bitcodeBytes);
  }
  if (modules.eligible.empty())
    return makeError(training.directory().string() + ": no module has a working -Oz baseline");

  record.validationModuleNames.clear();
  record.validationBaselineSizes.clear();
  if (validation) {
    for (const corpus::ModuleSpec& m : validation->modules())
      modules.validation.push_back(&m);
    std::vector<evaluators::BaselineResult> vb = evaluator.baselines(modules.validation);
    for (size_t i = 0; i < modules.validation.size(); ++i) {
      record.validationModuleNames.push_back(modules.validation[i]->name);
      record.validationBaselineSizes.push_back(vb[i].sizeBytes.value_or(0));
    }
  }
  return modules;
}

} // namespace mlgo::training
