#include "mlgo/evaluators/Evaluator.h"

#include <cstdlib>

namespace mlgo::evaluators {

std::string EvaluatorOptions::defaultInProcessWorker() {
  // MLGO_INPROCESS_WORKER points an installed or relocated build at its worker.
  if (const char* fromEnvironment = std::getenv("MLGO_INPROCESS_WORKER"))
    return fromEnvironment;
  return MLGO_DEFAULT_INPROCESS_WORKER;
}

} // namespace mlgo::evaluators
