#include "mlgo/es/Optimizers.h"

#include "mlgo/support/OptionSchema.h"

#include <utility>

namespace mlgo::es {

namespace {

template <class Options> using OptimizerOf = typename Options::Optimizer;

// f(std::in_place_type<Options>) for every alternative, in order.
template <class F> void forEachAlternative(F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f(std::in_place_type<std::variant_alternative_t<I, OptimizerOptions>>), ...);
  }
  (std::make_index_sequence<std::variant_size_v<OptimizerOptions>>());
}

template <class... Alternatives>
OptionSchema<std::variant<Alternatives...>>
schemaOf(std::type_identity<std::variant<Alternatives...>>) {
  std::vector<std::string> names;
  for (OptimizerKind kind : optimizerKinds())
    names.emplace_back(optimizerKindName(kind));
  return alternativesSchema<Alternatives...>("optimizer", "Blackbox optimiser", std::move(names));
}

} // namespace

const OptionSchema<OptimizerOptions>& optimizerSchema() {
  static const OptionSchema<OptimizerOptions> schema =
      schemaOf(std::type_identity<OptimizerOptions>());
  return schema;
}

OptimizerKind kindOf(const OptimizerOptions& options) {
  return std::visit([](const auto& o) { return OptimizerOf<std::decay_t<decltype(o)>>::kKind; },
                    options);
}

Status validateOptimizer(const OptimizerOptions& options) {
  return std::visit([](const auto& o) { return o.validate(); }, options);
}

std::vector<OptimizerKind> optimizerKinds() {
  std::vector<OptimizerKind> kinds;
  forEachAlternative([&]<class Options>(std::in_place_type_t<Options>) {
    kinds.push_back(OptimizerOf<Options>::kKind);
  });
  return kinds;
}

OptimizerOptions defaultOptimizerOptions(OptimizerKind kind) {
  OptimizerOptions options;
  forEachAlternative([&]<class Options>(std::in_place_type_t<Options>) {
    if (OptimizerOf<Options>::kKind == kind)
      options = Options{};
  });
  return options;
}

Expected<std::unique_ptr<BlackboxOptimizer>>
createOptimizer(OptimizerOptions options, const Eigen::VectorXd& parameters,
                const std::optional<Eigen::VectorXd>& scale, uint64_t seed) {
  return std::visit(
      [&](auto& o) -> Expected<std::unique_ptr<BlackboxOptimizer>> {
        using Optimizer = OptimizerOf<std::decay_t<decltype(o)>>;
        o.reseed(seed);
        Expected<Optimizer> created = Optimizer::create(o, parameters, scale);
        if (!created)
          return created.error();
        return std::unique_ptr<BlackboxOptimizer>(std::make_unique<Optimizer>(created.take()));
      },
      options);
}

const std::vector<std::string_view>& optimizerStepColumns() {
  static const std::vector<std::string_view> columns = [] {
    std::vector<std::string_view> all;
    forEachAlternative([&]<class Options>(std::in_place_type_t<Options>) {
      for (std::string_view column : OptimizerOf<Options>::stepColumns())
        all.push_back(column);
    });
    return all;
  }();
  return columns;
}

} // namespace mlgo::es
