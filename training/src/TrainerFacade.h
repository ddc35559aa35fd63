// What the three trainer classes (EsTrainer, PpoTrainer, BcTrainer) hold
// behind their pimpl: the options, the TrainingLoop and the algorithm it
// runs (for the typed step records). One place creates or resumes a run.
#pragma once

#include "mlgo/evaluators/Scorer.h"
#include "mlgo/support/Expected.h"
#include "mlgo/training/TrainingLoop.h"

#include <memory>
#include <optional>

namespace mlgo::training::detail {

template <class Algorithm, class Options> struct TrainerFacade {
  Options options;
  Algorithm* algorithm = nullptr; // owned by `loop`
  std::optional<TrainingLoop> loop;

  // Validates the options, then starts a new run or resumes the one in
  // options.run.output. The algorithm keeps a reference to `options`.
  template <class Impl>
  static Expected<std::unique_ptr<Impl>> open(Options options, evaluators::Scorer* scorer,
                                              bool resume) {
    if (Status valid = options.validate(); !valid)
      return valid.error();
    auto impl = std::make_unique<Impl>();
    impl->options = std::move(options);
    auto algorithm = std::make_unique<Algorithm>(impl->options, scorer);
    impl->algorithm = algorithm.get();
    int64_t interval = 1;
    if constexpr (requires { impl->options.data.validationInterval; })
      interval = impl->options.data.validationInterval;
    Expected<TrainingLoop> loop =
        resume ? TrainingLoop::resume(impl->options.run, interval, std::move(algorithm), scorer)
               : TrainingLoop::create(impl->options.run, interval, std::move(algorithm), scorer);
    if (!loop)
      return loop.error();
    impl->loop.emplace(loop.take());
    return impl;
  }
};

} // namespace mlgo::training::detail
