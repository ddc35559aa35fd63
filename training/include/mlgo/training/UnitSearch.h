// The searcher behind mlgo-cc --mlgo-search (deploy/BuildSearch.h): one
// translation unit's decision search within a budget, on an evaluator.
//
// The unit is compiled at -Oz, with the deployed policy, with the policy under
// callee consistency (CalleeConsistent.h: declining a callee everywhere or
// nowhere, a move single flips cannot make) and with its previous choice (if
// the cache had one); the search starts from the smallest of these and
// tries BUDGET single flips in the guided order (where the start overrules
// the compiler first, then the policy's smallest logit margins:
// DecisionSearch.h). The chosen decisions are the search's best when it is
// smaller than -Oz's object, else -Oz's own (an empty choice): no unit ends
// larger than -Oz.
#pragma once

#include "mlgo/deploy/BuildSearch.h"
#include "mlgo/evaluators/Scorer.h"
#include "mlgo/training/DecisionSearch.h"

namespace mlgo::training {

struct UnitSearchOptions {
  // How the trials are tried (DecisionSearch.h); the budget is the request's.
  SearchOrder order = SearchOrder::Guided;
  size_t trialsPerRound = DecisionSearchOptions().trialsPerRound;
  // Also start from the policy's callee-consistent twin (one more compile
  // per searched unit); off, or a policy consistent already, starts from
  // the policy as given.
  bool consistentStart = true;
};

Expected<deploy::UnitSearchOutcome> searchTranslationUnit(evaluators::Scorer& scorer,
                                                          const deploy::UnitSearchRequest& request,
                                                          const UnitSearchOptions& options = {});

} // namespace mlgo::training
