#include "mlgo/policies/Mlp.h"

#include "mlgo/support/OptionSchema.h"

#include "TensorSpecInternal.h"
#include "VocabularyInternal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace mlgo::policies {

namespace {

using ConstVectorMap = Eigen::Map<const Eigen::VectorXd>;
using VectorMap = Eigen::Map<Eigen::VectorXd>;
using ConstMatrixMap = Eigen::Map<const Eigen::MatrixXd>;
using MatrixMap = Eigen::Map<Eigen::MatrixXd>;

// What a kept decision (MlpOptions::residualKept) adds to its logit: far
// beyond any network's logit difference, and finite.
constexpr double kKeptDecisionMargin = 1e9;

Eigen::Index eigenSize(size_t n) {
  return static_cast<Eigen::Index>(n);
}

// log Σ exp(logits), stable for large logits.
double logSumExp(std::span<const double> logits) {
  double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double z : logits)
    sum += std::exp(z - top);
  return top + std::log(sum);
}

// p log p from log p, with 0 log 0 = 0.
double plogp(double logP) {
  double p = std::exp(logP);
  return p > 0 ? p * logP : 0.0;
}

void softmax(std::span<const double> logits, std::span<double> probabilities) {
  double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    sum += probabilities[i] = std::exp(logits[i] - top);
  for (double& p : probabilities)
    p /= sum;
}

} // namespace

std::string_view activationName(Activation activation) {
  switch (activation) {
  case Activation::Relu:
    return "relu";
  case Activation::Tanh:
    return "tanh";
  }
  assert(false && "unknown Activation");
  return "";
}

Expected<Activation> parseActivation(std::string_view name) {
  for (Activation activation : {Activation::Relu, Activation::Tanh})
    if (activationName(activation) == name)
      return activation;
  return makeError("unknown activation \"" + std::string(name) + "\" (expected relu or tanh)");
}

Status MlpOptions::validate() const {
  for (size_t i = 0; i < hiddenLayers.size(); ++i)
    if (hiddenLayers[i] < 1)
      return makeError("hiddenLayers[" + std::to_string(i) + "]: must be at least 1 (got " +
                       std::to_string(hiddenLayers[i]) + ")");
  if (actions < 2)
    return makeError("actions: must be at least 2 (got " + std::to_string(actions) + ")");
  for (size_t i = 0; i < excludedFeatures.size(); ++i)
    if (excludedFeatures[i].empty())
      return makeError("excludedFeatures[" + std::to_string(i) + "]: is empty");
  if (!(residualMargin >= 0) || !std::isfinite(residualMargin))
    return makeError("residualMargin: must be a finite number >= 0 (got " +
                     std::to_string(residualMargin) + ")");
  if (!residualKept.empty()) {
    if (!(residualMargin > 0))
      return makeError("residualKept: keeping the compiler's decisions needs a residual policy "
                       "(residualMargin > 0)");
    if (!candidateMask.empty())
      return makeError("residualKept: not for candidate scoring (candidateMask)");
    for (size_t i = 0; i < residualKept.size(); ++i)
      if (residualKept[i] < 0 || residualKept[i] >= actions ||
          (i > 0 && residualKept[i] <= residualKept[i - 1]))
        return makeError("residualKept: decisions must be distinct, sorted and in [0, " +
                         std::to_string(actions) + ") (got " + std::to_string(residualKept[i]) +
                         ")");
  }
  if (unanimousMembers < 0 || unanimousMembers > 1024)
    return makeError("unanimousMembers: must be 0 (one network) or 2..1024 (got " +
                     std::to_string(unanimousMembers) + ")");
  if (unanimousMembers > 1 && !(residualMargin > 0))
    return makeError("unanimousMembers: unanimity keeps the compiler's own decision unless "
                     "every member flips it, so it needs a residual policy (residualMargin > 0)");
  if (unanimousMembers > 1 && !candidateMask.empty())
    return makeError("unanimousMembers: not for candidate scoring (candidateMask)");
  // An empty residualFeature is the task's to fill (CompilerTask::
  // policyOptions): MlpStructure::create refuses it if it is still empty.
  return Status::ok();
}

// ---------------------------------------------------------------------------
// MlpStructure

Expected<std::shared_ptr<const MlpStructure>>
MlpStructure::create(const std::vector<TensorSpec>& features, const Vocabulary& vocabulary,
                     const MlpOptions& options) {
  if (Status valid = options.validate(); !valid)
    return makeError("mlp options: " + valid.error().message);

  std::shared_ptr<MlpStructure> structure(new MlpStructure());
  structure->options_ = options;
  std::set<std::string, std::less<>> excluded(options.excludedFeatures.begin(),
                                              options.excludedFeatures.end());
  std::set<std::string, std::less<>> seen;
  const bool residual = options.residualMargin > 0;
  std::vector<bool> networkInput;
  std::optional<size_t> residualInput; // index into inputs_
  for (const TensorSpec& feature : features) {
    const bool isResidual = residual && feature.name == options.residualFeature;
    if (isResidual && feature.elementCount() != 1)
      return makeError("residual feature \"" + feature.name + "\" (" +
                       detail::typeAndShape(feature) + ") must be a single value");
    if (excluded.count(feature.name) && !isResidual)
      continue;
    if (!seen.insert(feature.name).second)
      return makeError("mlp input \"" + feature.name + "\" appears twice");
    networkInput.push_back(!excluded.count(feature.name));
    if (isResidual)
      residualInput = structure->inputs_.size();
    if (!networkInput.back()) {
      // Read only as the residual decision: no vocabulary needed.
    } else if (const Vocabulary::Boundaries* boundaries = vocabulary.find(feature.name)) {
      Status status = structure->vocabulary_.set(feature.name, *boundaries);
      if (!status)
        return status.error();
    } else if (!feature.isFloatVector()) {
      return makeError("mlp input \"" + feature.name + "\" (" + detail::typeAndShape(feature) +
                       ") has no vocabulary entry; only float vectors such as embeddings are "
                       "passed through unnormalised");
    }
    structure->inputs_.push_back(feature);
  }
  if (residual && options.residualFeature.empty())
    return makeError("mlp: a residual policy (margin " + std::to_string(options.residualMargin) +
                     ") needs a residual feature, the task's default decision; this task has "
                     "none");
  if (residual && !residualInput)
    return makeError("residual feature \"" + options.residualFeature +
                     "\" is not among the features the compiler sends");
  if (std::count(networkInput.begin(), networkInput.end(), true) == 0)
    return makeError("mlp: no input features left after the excluded ones");
  if (!options.candidateMask.empty()) {
    auto mask = std::find_if(structure->inputs_.begin(), structure->inputs_.end(),
                             [&](const TensorSpec& f) { return f.name == options.candidateMask; });
    if (mask == structure->inputs_.end() || mask->elementCount() < 2)
      return makeError("candidate mask \"" + options.candidateMask +
                       "\" is not among the inputs as a vector of candidates");
    structure->candidates_ = mask->elementCount();
    for (const TensorSpec& input : structure->inputs_)
      if (input.elementCount() != 1 && input.elementCount() != structure->candidates_)
        return makeError("candidate scoring: input \"" + input.name + "\" (" +
                         detail::typeAndShape(input) + ") has neither 1 nor " +
                         std::to_string(structure->candidates_) + " values");
  }

  const size_t expansions = options.withSqrt ? 3 : 2;
  size_t networkInputs = 0;
  for (size_t i = 0; i < structure->inputs_.size(); ++i) {
    const TensorSpec& input = structure->inputs_[i];
    InputEncoding encoding;
    encoding.featureOffset = structure->featureCount_;
    encoding.elements = input.elementCount();
    encoding.networkInput = networkInput[i];
    encoding.perCandidate = structure->candidates_ > 0 && encoding.elements > 1;
    if (structure->candidates_ > 0 && input.name == options.candidateMask)
      structure->maskOffset_ = structure->featureCount_;
    if (residualInput == i)
      structure->residualOffset_ = encoding.featureOffset;
    if (!encoding.networkInput) {
      structure->featureCount_ += encoding.elements;
      structure->encodings_.push_back(encoding);
      continue;
    }
    if (const Vocabulary::Boundaries* boundaries = structure->vocabulary_.find(input.name)) {
      // Quantile boundaries of sparse features repeat a lot (ml-compiler-opt
      // writes 1000 per feature, often a handful of distinct values): search
      // the distinct ones and look the fraction up.
      encoding.normalised = true;
      const double total = static_cast<double>(boundaries->size());
      for (size_t i = 0; i < boundaries->size(); ++i) {
        if (i + 1 < boundaries->size() && (*boundaries)[i + 1] == (*boundaries)[i])
          continue;
        encoding.distinct.push_back((*boundaries)[i]);
        encoding.fractions.push_back(static_cast<double>(i + 1) / total);
      }
    }
    structure->featureCount_ += encoding.elements;
    networkInputs +=
        (encoding.perCandidate ? 1 : encoding.elements) * (encoding.normalised ? expansions : 1);
    structure->encodings_.push_back(encoding);
  }

  std::vector<size_t> widths{networkInputs};
  for (int width : options.hiddenLayers)
    widths.push_back(static_cast<size_t>(width));
  widths.push_back(
      structure->candidates_ > 0 ? 1 : static_cast<size_t>(options.actions) * structure->members());
  size_t offset = 0;
  size_t activationOffset = 0;
  structure->activationOffsets_.push_back(0);
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    Layer layer;
    layer.inputs = widths[l];
    layer.outputs = widths[l + 1];
    layer.weightOffset = offset;
    layer.biasOffset = offset + layer.inputs * layer.outputs;
    offset = layer.biasOffset + layer.outputs;
    structure->layers_.push_back(layer);
    activationOffset += layer.inputs;
    structure->activationOffsets_.push_back(activationOffset);
  }
  structure->activationOffsets_.push_back(activationOffset + widths.back());
  structure->parameterCount_ = offset;
  structure->widestLayer_ = *std::max_element(widths.begin(), widths.end());
  return std::shared_ptr<const MlpStructure>(std::move(structure));
}

std::string MlpStructure::describe() const {
  std::string text = "mlp[";
  for (size_t i = 0; i < options_.hiddenLayers.size(); ++i)
    text += (i ? "," : "") + std::to_string(options_.hiddenLayers[i]);
  text += "] " + std::string(activationName(options_.activation));
  if (residualOffset_) {
    char margin[32];
    std::snprintf(margin, sizeof margin, "%g", options_.residualMargin);
    text += " residual(" + options_.residualFeature + ", " + margin;
    for (size_t i = 0; i < options_.residualKept.size(); ++i)
      text += (i ? "," : "; keeps ") + std::to_string(options_.residualKept[i]);
    text += ")";
  }
  if (candidates_ > 0)
    text += " scoring " + std::to_string(candidates_) + " candidates";
  if (members() > 1)
    text += " unanimous of " + std::to_string(members());
  return text;
}

namespace {

// Writes the normalised value of `value` and its expansions.
double* writeNormalised(const std::vector<double>& distinct, const std::vector<double>& fractions,
                        bool withSqrt, double value, double* out) {
  size_t below = detail::countAtOrBelow(distinct, value);
  double x = below == 0 ? 0.0 : fractions[below - 1];
  *out++ = x;
  *out++ = x * x;
  if (withSqrt)
    *out++ = std::sqrt(x);
  return out;
}

} // namespace

void MlpStructure::encode(FeatureValues features, std::span<double> networkInputs) const {
  assert(features.size() == featureCount_);
  assert(networkInputs.size() == inputWidth());
  double* out = networkInputs.data();
  for (const InputEncoding& encoding : encodings_) {
    const double* in = features.data() + encoding.featureOffset;
    if (!encoding.networkInput)
      continue;
    if (!encoding.normalised) {
      out = std::copy(in, in + encoding.elements, out);
      continue;
    }
    for (size_t e = 0; e < encoding.elements; ++e)
      out = writeNormalised(encoding.distinct, encoding.fractions, options_.withSqrt, in[e], out);
  }
}

void MlpStructure::encodeCandidate(FeatureValues features, size_t candidate,
                                   std::span<double> networkInputs) const {
  assert(candidates_ > 0 && candidate < candidates_);
  assert(features.size() == featureCount_);
  assert(networkInputs.size() == inputWidth());
  double* out = networkInputs.data();
  for (const InputEncoding& encoding : encodings_) {
    if (!encoding.networkInput)
      continue;
    const double* in = features.data() + encoding.featureOffset;
    const size_t first = encoding.perCandidate ? candidate : 0;
    const size_t count = encoding.perCandidate ? 1 : encoding.elements;
    for (size_t e = first; e < first + count; ++e)
      out = encoding.normalised ? writeNormalised(encoding.distinct, encoding.fractions,
                                                  options_.withSqrt, in[e], out)
                                : (*out = in[e], out + 1);
  }
}

bool MlpStructure::candidateValid(FeatureValues features, size_t candidate) const {
  return features[maskOffset_ + candidate] != 0;
}

Eigen::VectorXd MlpStructure::initialParameters(uint64_t seed) const {
  Eigen::VectorXd parameters = Eigen::VectorXd::Zero(eigenSize(parameterCount_));
  RandomStream rng(deriveKey({seed, 0x6d6c70 /* "mlp" */}));
  for (const Layer& layer : layers_) {
    double limit = std::sqrt(6.0 / static_cast<double>(layer.inputs + layer.outputs));
    for (size_t i = 0; i < layer.inputs * layer.outputs; ++i)
      parameters[eigenSize(layer.weightOffset + i)] = (2 * rng.uniform01() - 1) * limit;
  }
  if (residualOffset_) {
    const Layer& output = layers_.back();
    parameters.segment(eigenSize(output.weightOffset), eigenSize(output.inputs * output.outputs))
        .setZero();
  }
  return parameters;
}

// ---------------------------------------------------------------------------
// MlpPolicy

// Per-thread scratch: every layer's output, and two delta vectors for the
// backward pass. Grown on first use; decide() then allocates nothing.
struct MlpPolicy::Workspace {
  std::vector<double> activations;
  std::vector<double> delta;
  std::vector<double> deltaBelow;
  std::vector<double> dLogits;
  std::vector<double> scores;
  std::vector<double> dOutputs; // unanimity: d loss / d members' outputs
};

MlpPolicy::Workspace& MlpPolicy::workspace() {
  thread_local Workspace work;
  return work;
}

MlpPolicy::MlpPolicy(std::shared_ptr<const MlpStructure> structure, Eigen::VectorXd parameters)
    : structure_(std::move(structure)), parameters_(std::move(parameters)) {
  assert(structure_);
  assert(static_cast<size_t>(parameters_.size()) == structure_->parameterCount());
}

MlpPolicy MlpPolicy::initialised(std::shared_ptr<const MlpStructure> structure, uint64_t seed) {
  Eigen::VectorXd parameters = structure->initialParameters(seed);
  return MlpPolicy(std::move(structure), std::move(parameters));
}

void MlpPolicy::setParameters(std::span<const double> parameters) {
  assert(parameters.size() == parameterCount());
  parameters_ = ConstVectorMap(parameters.data(), eigenSize(parameters.size()));
}

MlpPolicy MlpPolicy::withParameters(std::span<const double> parameters) const {
  assert(parameters.size() == parameterCount());
  return MlpPolicy(structure_, ConstVectorMap(parameters.data(), eigenSize(parameters.size())));
}

std::span<const double> MlpPolicy::forward(FeatureValues features, Workspace& work) const {
  const MlpStructure& s = *structure_;
  if (work.activations.size() < s.activationOffsets_.back())
    work.activations.resize(s.activationOffsets_.back());
  s.encode(features, {work.activations.data(), s.inputWidth()});
  std::span<const double> logits = propagate(work);
  if (s.residualOffset_) {
    // A constant offset (to each member's logit of the decision): the
    // gradients with respect to the parameters are those of the network alone.
    double* out = work.activations.data() + s.activationOffsets_[s.layers_.size()];
    double decision = features[*s.residualOffset_];
    if (decision >= 0 && decision < static_cast<double>(s.actionCount())) {
      const std::vector<int>& kept = s.options_.residualKept;
      // A kept decision outweighs any logit a network gives; finite, so
      // that a softmax over the logits stays defined.
      const double margin = std::binary_search(kept.begin(), kept.end(), static_cast<int>(decision))
                                ? kKeptDecisionMargin
                                : s.options_.residualMargin;
      for (size_t m = 0; m < s.members(); ++m)
        out[m * s.actionCount() + static_cast<size_t>(decision)] += margin;
    }
  }
  if (s.members() > 1)
    return unanimousLogits(features, work);
  return logits;
}

namespace {

// Member `member`'s preference for `action`: its logit minus its largest
// other logit (> 0: the member chooses it), and that other action.
std::pair<double, size_t> memberPreference(std::span<const double> outputs, size_t actions,
                                           size_t member, size_t action) {
  const double* z = outputs.data() + member * actions;
  size_t rival = action == 0 ? 1 : 0;
  for (size_t b = 0; b < actions; ++b)
    if (b != action && z[b] > z[rival])
      rival = b;
  return {z[action] - z[rival], rival};
}

} // namespace

std::span<const double> MlpPolicy::unanimousLogits(FeatureValues features, Workspace& work) const {
  const MlpStructure& s = *structure_;
  const size_t actions = s.actionCount();
  std::span<const double> outputs{work.activations.data() + s.activationOffsets_[s.layers_.size()],
                                  actions * s.members()};
  const double decision = features[*s.residualOffset_];
  work.scores.assign(actions, 0.0);
  for (size_t a = 0; a < actions; ++a) {
    if (static_cast<double>(a) == decision)
      continue;
    double least = std::numeric_limits<double>::infinity();
    for (size_t m = 0; m < s.members(); ++m)
      least = std::min(least, memberPreference(outputs, actions, m, a).first);
    work.scores[a] = least;
  }
  return work.scores;
}

void MlpPolicy::backwardUnanimous(FeatureValues features, Workspace& work,
                                  std::span<const double> dLogits,
                                  std::span<double> gradient) const {
  const MlpStructure& s = *structure_;
  const size_t actions = s.actionCount();
  std::span<const double> outputs{work.activations.data() + s.activationOffsets_[s.layers_.size()],
                                  actions * s.members()};
  const double decision = features[*s.residualOffset_];
  // The workspace's buffer: training calls this for every decision.
  std::vector<double>& dOutputs = work.dOutputs;
  dOutputs.assign(outputs.size(), 0.0);
  for (size_t a = 0; a < actions; ++a) {
    if (static_cast<double>(a) == decision || dLogits[a] == 0)
      continue;
    size_t least = 0;
    std::pair<double, size_t> leastPreference = memberPreference(outputs, actions, 0, a);
    for (size_t m = 1; m < s.members(); ++m)
      if (std::pair<double, size_t> p = memberPreference(outputs, actions, m, a);
          p.first < leastPreference.first) {
        least = m;
        leastPreference = p;
      }
    dOutputs[least * actions + a] += dLogits[a];
    dOutputs[least * actions + leastPreference.second] -= dLogits[a];
  }
  backward(work, dOutputs, gradient);
}

const std::vector<double>& MlpPolicy::candidateScores(FeatureValues features,
                                                      Workspace& work) const {
  const MlpStructure& s = *structure_;
  if (work.activations.size() < s.activationOffsets_.back())
    work.activations.resize(s.activationOffsets_.back());
  work.scores.assign(s.candidates_, -std::numeric_limits<double>::infinity());
  for (size_t c = 0; c < s.candidates_; ++c) {
    if (!s.candidateValid(features, c))
      continue;
    s.encodeCandidate(features, c, {work.activations.data(), s.inputWidth()});
    work.scores[c] = propagate(work)[0];
  }
  if (s.residualOffset_) {
    // The candidate the compiler chose gets the margin (a constant: the
    // gradients are the network's alone), if the mask allows it.
    const double decision = features[*s.residualOffset_];
    if (decision >= 0 && decision < static_cast<double>(s.candidates_) &&
        std::isfinite(work.scores[static_cast<size_t>(decision)]))
      work.scores[static_cast<size_t>(decision)] += s.options_.residualMargin;
  }
  return work.scores;
}

std::span<const double> MlpPolicy::propagate(Workspace& work) const {
  const MlpStructure& s = *structure_;
  const std::vector<size_t>& offsets = s.activationOffsets_;
  double* act = work.activations.data();
  const double* theta = parameters_.data();
  const bool tanh = s.options_.activation == Activation::Tanh;
  for (size_t l = 0; l < s.layers_.size(); ++l) {
    const MlpStructure::Layer& layer = s.layers_[l];
    ConstMatrixMap weights(theta + layer.weightOffset, eigenSize(layer.outputs),
                           eigenSize(layer.inputs));
    ConstVectorMap bias(theta + layer.biasOffset, eigenSize(layer.outputs));
    ConstVectorMap in(act + offsets[l], eigenSize(layer.inputs));
    VectorMap out(act + offsets[l + 1], eigenSize(layer.outputs));
    out.noalias() = weights * in;
    out += bias;
    if (l + 1 < s.layers_.size()) {
      if (tanh)
        out.array() = out.array().tanh();
      else
        out = out.cwiseMax(0.0);
    }
  }
  return {act + offsets[s.layers_.size()], s.layers_.back().outputs};
}

void MlpPolicy::backward(Workspace& work, std::span<const double> dLogits,
                         std::span<double> gradient) const {
  const MlpStructure& s = *structure_;
  assert(dLogits.size() == s.layers_.back().outputs);
  assert(gradient.size() == parameterCount());
  const std::vector<size_t>& offsets = s.activationOffsets_;
  if (work.delta.size() < s.widestLayer_) {
    work.delta.resize(s.widestLayer_);
    work.deltaBelow.resize(s.widestLayer_);
  }
  std::copy(dLogits.begin(), dLogits.end(), work.delta.begin());

  const double* theta = parameters_.data();
  const double* act = work.activations.data();
  const bool tanh = s.options_.activation == Activation::Tanh;
  for (size_t l = s.layers_.size(); l-- > 0;) {
    const MlpStructure::Layer& layer = s.layers_[l];
    ConstVectorMap delta(work.delta.data(), eigenSize(layer.outputs));
    ConstVectorMap in(act + offsets[l], eigenSize(layer.inputs));
    MatrixMap weightGradient(gradient.data() + layer.weightOffset, eigenSize(layer.outputs),
                             eigenSize(layer.inputs));
    VectorMap biasGradient(gradient.data() + layer.biasOffset, eigenSize(layer.outputs));
    weightGradient.noalias() += delta * in.transpose();
    biasGradient += delta;
    if (l == 0)
      break;
    // Through the weights, then through the activation of the layer below,
    // whose derivative follows from its output h: relu' = [h > 0],
    // tanh' = 1 - h².
    ConstMatrixMap weights(theta + layer.weightOffset, eigenSize(layer.outputs),
                           eigenSize(layer.inputs));
    VectorMap below(work.deltaBelow.data(), eigenSize(layer.inputs));
    below.noalias() = weights.transpose() * delta;
    if (tanh)
      below.array() *= 1.0 - in.array().square();
    else
      below.array() = (in.array() > 0.0).select(below.array(), 0.0);
    std::swap(work.delta, work.deltaBelow);
  }
}

Decision MlpPolicy::decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const {
  Workspace& work = workspace();
  // Candidate scoring: a softmax over the valid candidates' scores (invalid
  // ones score -inf and are never chosen; without any valid candidate the
  // advice is the last, which the register allocator always allows).
  std::span<const double> logits = structure_->candidates_ > 0
                                       ? std::span<const double>(candidateScores(features, work))
                                       : forward(features, work);
  if (structure_->candidates_ > 0 && std::isinf(*std::max_element(logits.begin(), logits.end())))
    return Decision{static_cast<int64_t>(logits.size() - 1), 0.0};
  if (mode == DecisionMode::Deterministic) {
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
      if (logits[i] > logits[best])
        best = i;
    return Decision{static_cast<int64_t>(best), 0.0};
  }

  double top = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (double z : logits)
    total += std::exp(z - top);
  // Inverse CDF on the unnormalised weights; the fallback catches a u that
  // rounding puts past the last cumulative weight.
  double u = rng.uniform01() * total;
  size_t chosen = logits.size() - 1;
  double cumulative = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    double weight = std::exp(logits[i] - top);
    cumulative += weight;
    if (u < cumulative) {
      chosen = i;
      break;
    }
  }
  while (chosen > 0 && std::exp(logits[chosen] - top) == 0)
    --chosen;
  return Decision{static_cast<int64_t>(chosen), logits[chosen] - top - std::log(total)};
}

std::span<const double> MlpPolicy::policyLogits(FeatureValues features, Workspace& work) const {
  if (structure_->candidates_ > 0)
    return candidateScores(features, work);
  return forward(features, work);
}

void MlpPolicy::backwardLogits(FeatureValues features, Workspace& work,
                               std::span<const double> dLogits, std::span<double> gradient) const {
  const MlpStructure& s = *structure_;
  if (s.members() > 1) {
    backwardUnanimous(features, work, dLogits, gradient);
    return;
  }
  if (s.candidates_ == 0) {
    backward(work, dLogits, gradient);
    return;
  }
  // One shared network scores every candidate: its gradient is the sum over
  // the candidates of each one's pass, weighted by d loss / d score.
  for (size_t c = 0; c < s.candidates_; ++c) {
    if (dLogits[c] == 0 || !s.candidateValid(features, c))
      continue;
    s.encodeCandidate(features, c, {work.activations.data(), s.inputWidth()});
    propagate(work);
    backward(work, dLogits.subspan(c, 1), gradient);
  }
}

void MlpPolicy::computeLogits(FeatureValues features, std::span<double> logits) const {
  assert(logits.size() == structure_->logitCount());
  std::span<const double> result = policyLogits(features, workspace());
  std::copy(result.begin(), result.end(), logits.begin());
}

void MlpPolicy::computeProbabilities(FeatureValues features,
                                     std::span<double> probabilities) const {
  assert(probabilities.size() == structure_->logitCount());
  softmax(policyLogits(features, workspace()), probabilities);
}

double MlpPolicy::logProbability(FeatureValues features, int64_t action) const {
  std::span<const double> logits = policyLogits(features, workspace());
  assert(action >= 0 && static_cast<size_t>(action) < logits.size());
  return logits[static_cast<size_t>(action)] - logSumExp(logits);
}

double MlpPolicy::entropy(FeatureValues features) const {
  std::span<const double> logits = policyLogits(features, workspace());
  double normaliser = logSumExp(logits);
  double h = 0;
  for (double z : logits)
    h -= plogp(z - normaliser);
  return h;
}

void MlpPolicy::accumulateGradient(FeatureValues features, std::span<const double> dLossDLogits,
                                   std::span<double> gradient) const {
  Workspace& work = workspace();
  policyLogits(features, work);
  backwardLogits(features, work, dLossDLogits, gradient);
}

double MlpPolicy::accumulateLogProbabilityGradient(FeatureValues features, int64_t action,
                                                   double scale, std::span<double> gradient) const {
  Workspace& work = workspace();
  std::span<const double> logits = policyLogits(features, work);
  assert(action >= 0 && static_cast<size_t>(action) < logits.size());
  // d log softmax(z)_a / dz = onehot(a) - softmax(z)
  work.dLogits.resize(logits.size());
  softmax(logits, work.dLogits);
  double logProbability = logits[static_cast<size_t>(action)] - logSumExp(logits);
  for (size_t i = 0; i < logits.size(); ++i)
    work.dLogits[i] = scale * ((i == static_cast<size_t>(action) ? 1.0 : 0.0) - work.dLogits[i]);
  backwardLogits(features, work, work.dLogits, gradient);
  return logProbability;
}

double MlpPolicy::accumulateEntropyGradient(FeatureValues features, double scale,
                                            std::span<double> gradient) const {
  Workspace& work = workspace();
  std::span<const double> logits = policyLogits(features, work);
  // H = -Σ p log p;  dH/dz_j = -p_j (log p_j + H)
  double normaliser = logSumExp(logits);
  work.dLogits.resize(logits.size());
  double h = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    work.dLogits[i] = logits[i] - normaliser;
    h -= plogp(work.dLogits[i]);
  }
  // An action with p = 0 (log p = -inf) contributes nothing, not NaN.
  for (double& d : work.dLogits)
    d = std::exp(d) > 0 ? -scale * std::exp(d) * (d + h) : 0.0;
  backwardLogits(features, work, work.dLogits, gradient);
  return h;
}

const OptionSchema<MlpOptions>& MlpOptions::schema() {
  static const OptionSchema<MlpOptions> schema = [] {
    OptionSchema<MlpOptions> s;
    s.value(
         "hidden", "Hidden layer widths of a random MLP",
         [](auto& o) -> auto& { return o.hiddenLayers; })
        .delimiter(',');
    s.choice(
        "activation", "Activation of a random MLP", [](auto& o) -> auto& { return o.activation; },
        {Activation::Relu, Activation::Tanh}, activationName);
    s.flag(
         "with-sqrt", "Also feed sqrt of each normalised feature",
         [](auto& o) -> auto& { return o.withSqrt; })
        .negatable();
    s.value(
         "residual-margin",
         "A new MLP as a residual around the compiler's own decision: add this to the logit "
         "of the task's default decision's action and start with a zero output layer "
         "(exactly the task's baseline); 0: a plain random MLP",
         [](auto& o) -> auto& { return o.residualMargin; })
        .atLeast(0);
    return s;
  }();
  return schema;
}

} // namespace mlgo::policies
