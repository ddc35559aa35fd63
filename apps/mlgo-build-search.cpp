// mlgo-build-search: the search mlgo-cc --mlgo-search runs after a cache
// miss (deploy/BuildSearch.h), for one translation unit's bitcode on one
// in-process worker, so that `make -jN` uses about N cores.
//   mlgo-build-search --bitcode F --command F --name N --policy F [--previous F]
//                     --budget B [--verify] --outcome F --chosen-policy F
#include "mlgo/deploy/BuildSearch.h"
#include "mlgo/evaluators/Evaluator.h"
#include "mlgo/training/UnitSearch.h"

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  mlgo::Expected<mlgo::deploy::SearchProgramCall> call =
      mlgo::deploy::parseSearchProgramArguments({argv + 1, argv + argc});
  if (!call) {
    std::cerr << "mlgo-build-search: " << call.error().message
              << " (it is run by mlgo-cc --mlgo-search)\n";
    return 2;
  }
  mlgo::evaluators::EvaluatorOptions options;
  options.workers = 1; // the build's -j spreads units over cores
  options.compilerIdentity = options.clang + " (build-time search: no baseline cache)";
  options.incremental = true;
  options.incrementalVerify = call->request.verify;
  options.replayVerify = call->request.verify;
  mlgo::Expected<std::unique_ptr<mlgo::evaluators::Evaluator>> evaluator =
      mlgo::evaluators::Evaluator::create(options,
                                          mlgo::evaluators::CompilerTask::inliningForSize());
  if (!evaluator) {
    std::cerr << "mlgo-build-search: " << evaluator.error().message << "\n";
    return 1;
  }
  // -Oz's object was just compiled by clang; verification compiles it again.
  if (call->request.ozBytes > 0 && !call->request.verify)
    (*evaluator)->knowBaseline(call->request.module, call->request.ozBytes);
  // MLGO_SEARCH_CONSISTENT_START=0: start from the policy as given only,
  // not also from its callee-consistent twin (mlgo-cc --mlgo-help).
  mlgo::training::UnitSearchOptions searchOptions;
  if (const char* consistent = std::getenv("MLGO_SEARCH_CONSISTENT_START"))
    searchOptions.consistentStart = std::string(consistent) != "0";
  mlgo::Expected<mlgo::deploy::UnitSearchOutcome> outcome =
      mlgo::training::searchTranslationUnit(**evaluator, call->request, searchOptions);
  if (!outcome) {
    std::cerr << "mlgo-build-search: " << call->request.module.name << ": "
              << outcome.error().message << "\n";
    return 1;
  }
  if (mlgo::Status written = mlgo::deploy::writeSearchOutcome(*call, *outcome); !written) {
    std::cerr << "mlgo-build-search: " << written.error().message << "\n";
    return 1;
  }
  return 0;
}
