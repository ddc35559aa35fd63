// A multilayer perceptron policy over quantile-normalised features, as
// ml-compiler-opt's inlining agents use, with a flat parameter vector for ES
// and a backward pass for PPO and behavioural cloning.
//
// Network: network inputs -> [hidden layer: W h + b, activation]* -> W h + b
// = one logit per action; the policy is softmax(logits). The advice for an
// action is its index (for inlining: 0 = do not inline, 1 = inline).
//
// Network inputs, per policy input in order, per element:
//  - with a vocabulary entry: x = normalizedQuantile(boundaries, value),
//    expanded to [x, x*x] (+ sqrt(x) with withSqrt);
//    A float vector (an IR2Vec embedding) has one entry for all its
//    elements, built from all of them pooled (the trainers do so);
//  - float/double vectors without one: the raw value.
//
// Flat parameter layout, layer by layer from the input side: the weight
// matrix (outputs x inputs, column-major, i.e. Eigen's default), then the
// bias vector. Gradients use the same layout.
#pragma once

#include "mlgo/policies/Policy.h"
#include "mlgo/policies/Vocabulary.h"
#include "mlgo/support/OptionSchemaFwd.h"

#include <Eigen/Core>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlgo::policies {

enum class Activation { Relu, Tanh };

std::string_view activationName(Activation activation); // "relu", "tanh"
Expected<Activation> parseActivation(std::string_view name);

struct MlpOptions {
  // Widths of the hidden layers, input side first. Empty gives a linear
  // (logistic-regression) policy. ml-compiler-opt's inliner uses two layers
  // of this order of size; wider layers cost decide() time and ES dimensions.
  std::vector<int> hiddenLayers = {64, 64};
  // Non-linearity after every hidden layer. ReLU is ml-compiler-opt's choice;
  // tanh is smooth, which suits finite-difference checks and small nets.
  Activation activation = Activation::Relu;
  // Number of actions = logits; 2 for the binary inlining decision.
  int actions = 2;
  // Also feed sqrt(x) of each normalised feature (ml-compiler-opt's
  // with_sqrt): one more input per feature, more resolution near 0.
  bool withSqrt = false;
  // Header features the network does not read; names absent from the
  // header are ignored. The task adds its default-decision feature
  // (evaluators::CompilerTask::policyOptions): the heuristic's own answer,
  // which ml-compiler-opt discards so that a policy cannot learn to copy it.
  std::vector<std::string> excludedFeatures;
  // A residual policy around a decision the compiler already makes: when
  // residualMargin > 0, the policy reads `residualFeature` (an action index,
  // e.g. the inliner's own -Oz decision) and adds residualMargin to that
  // action's logit. With a zero output layer the policy is then exactly that
  // decision (for inlining: exactly -Oz), and a decision flips only where
  // the network's logit difference exceeds the margin, so training starts
  // at the heuristic rather than at a 98-99.9 % clone of it. The feature is
  // read whether or not it is excluded from the network's inputs. With a
  // candidate mask, the margin goes to the score of the candidate the
  // feature names (eviction: the default advisor's choice). 0: off.
  double residualMargin = 0;
  std::string residualFeature; // set by the task (CompilerTask::policyOptions)
  // Decisions of the compiler's that the residual policy never overrules
  // (mlgo-eval margin --keep): for inlining, {1} keeps every inline -Oz
  // makes, so the policy can only inline calls -Oz declines; {0} keeps
  // every call -Oz declines, so it can only decline inlines -Oz makes.
  // A wrong flip costs differently in each direction, so one direction may
  // be safe where both are not. Sorted, distinct, each < actions; needs a
  // residual policy with one logit per action. Empty: both ways.
  std::vector<int> residualKept;
  // Candidate scoring, ml-compiler-opt's eviction network: when set, this
  // feature (shape [1, N], the register allocator's "mask") marks which of
  // N candidates may be chosen. Every input of N elements gives one value
  // per candidate and single values are shared by all; the network maps one
  // candidate's values to one score (`actions` is then unused), the policy
  // is a softmax over the valid candidates' scores, and the advice is the
  // chosen candidate's index. Empty: off (one logit per action).
  std::string candidateMask;
  // Unanimity of an ensemble (mlgo-eval ensemble --unanimous): K >= 2
  // members' networks side by side (block-diagonal hidden layers, K·actions
  // outputs), each a residual policy with the margin above. The policy keeps
  // the compiler's own decision unless every member chooses the same other
  // action, so a flip needs all seeds' agreement: the mean of their logits
  // can flip where one confident member outweighs the others. The logits are
  // 0 for the default action and, for each other action a, the smallest over
  // the members of (member's logit of a - its largest other logit): a is
  // chosen exactly when every member chooses it. Needs a residual policy and
  // one logit per action (not candidate scoring). 0: one network.
  int unanimousMembers = 0;

  Status validate() const;
  bool operator==(const MlpOptions& other) const = default;
  // A random MLP's flags: --hidden, --activation, --with-sqrt, --residual-margin
  // (what the task sets is not a flag).
  static const OptionSchema<MlpOptions>& schema();
};

// The architecture, inputs and vocabulary: everything but the weights. It is
// immutable and shared by every policy (e.g. ES candidate) built on it.
class MlpStructure {
public:
  struct Layer {
    size_t inputs = 0;
    size_t outputs = 0;
    size_t weightOffset = 0; // into the flat parameters
    size_t biasOffset = 0;
  };

  // `features` are typically clang's header features; the excluded ones are
  // dropped and the rest, in order, become the policy's inputs. Every input
  // needs a vocabulary entry unless it is a float/double vector (passed
  // through). The structure keeps only the vocabulary entries it uses.
  // Shared, never copied: policies hold a shared_ptr to one structure.
  MlpStructure(const MlpStructure&) = delete;
  MlpStructure& operator=(const MlpStructure&) = delete;

  static Expected<std::shared_ptr<const MlpStructure>>
  create(const std::vector<TensorSpec>& features, const Vocabulary& vocabulary,
         const MlpOptions& options = {});

  const MlpOptions& options() const { return options_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const Vocabulary& vocabulary() const { return vocabulary_; }
  const std::vector<Layer>& layers() const { return layers_; }
  // Number of values decide() takes: the inputs' elements.
  size_t featureCount() const { return featureCount_; }
  // Width of the network's input layer, after normalisation and expansion.
  size_t inputWidth() const { return layers_.front().inputs; }
  size_t actionCount() const { return layers_.back().outputs / members(); }
  // Networks side by side in the output layer (MlpOptions::unanimousMembers), or 1.
  size_t members() const {
    return options_.unanimousMembers > 1 ? static_cast<size_t>(options_.unanimousMembers) : 1;
  }
  // The policy's logits per decision: one per action, or (candidate
  // scoring) one score per candidate, -inf for the masked ones.
  size_t logitCount() const { return candidates_ > 0 ? candidates_ : actionCount(); }
  size_t parameterCount() const { return parameterCount_; }
  // "mlp[64,64] relu"
  std::string describe() const;

  // Writes the inputWidth() network inputs for `features`.
  void encode(FeatureValues features, std::span<double> networkInputs) const;

  // Glorot-uniform weights (U(-a, a), a = sqrt(6 / (fan_in + fan_out))),
  // zero biases; a function of the seed alone. A residual policy's output
  // layer starts at zero, so that it starts exactly at the residual decision.
  Eigen::VectorXd initialParameters(uint64_t seed) const;
  // Where the residual feature is among the decide() values; nullopt when
  // the policy is not residual.
  std::optional<size_t> residualFeatureOffset() const { return residualOffset_; }
  // Candidate scoring: the number of candidates (0: off), and the network
  // inputs of candidate `candidate` (inputWidth() values).
  size_t candidates() const { return candidates_; }
  void encodeCandidate(FeatureValues features, size_t candidate,
                       std::span<double> networkInputs) const;
  // Whether candidate `candidate` may be chosen (its mask value is non-zero).
  bool candidateValid(FeatureValues features, size_t candidate) const;

private:
  struct InputEncoding {
    size_t featureOffset = 0;
    size_t elements = 0;
    bool normalised = false;   // false: passed through
    bool networkInput = true;  // false: only read as the residual decision
    bool perCandidate = false; // candidate scoring: one element per candidate
    // The vocabulary's distinct boundaries, and for each the fraction of all
    // boundaries <= it: normalizedQuantile without searching repeats.
    std::vector<double> distinct;
    std::vector<double> fractions;
  };

  MlpStructure() = default;
  friend class MlpPolicy;

  MlpOptions options_;
  std::vector<TensorSpec> inputs_;
  Vocabulary vocabulary_;
  std::vector<InputEncoding> encodings_;
  std::vector<Layer> layers_;
  // Where each layer's output starts in the activation buffer; [0] is the
  // network input, back() the logits. [size] is the buffer's length.
  std::vector<size_t> activationOffsets_;
  size_t featureCount_ = 0;
  size_t parameterCount_ = 0;
  size_t widestLayer_ = 0;
  std::optional<size_t> residualOffset_;
  size_t candidates_ = 0;
  size_t maskOffset_ = 0; // the mask's first value among the decide() values
};

class MlpPolicy final : public Policy {
public:
  // `parameters` must have structure->parameterCount() values.
  MlpPolicy(std::shared_ptr<const MlpStructure> structure, Eigen::VectorXd parameters);
  static MlpPolicy initialised(std::shared_ptr<const MlpStructure> structure, uint64_t seed);

  std::string describe() const override { return structure_->describe(); }
  const std::vector<TensorSpec>& inputs() const override { return structure_->inputs(); }
  // Deterministic: the argmax action (ties go to the lower action), with
  // logProbability 0 (that mode's distribution is a point mass; use
  // logProbability() for the softmax's value). Sampling: an action drawn from
  // softmax(logits) with one rng.uniform01(), and its log-probability.
  // Thread-safe; allocates only the first time a thread calls it.
  Decision decide(FeatureValues features, DecisionMode mode, RandomStream& rng) const override;

  const std::shared_ptr<const MlpStructure>& structure() const { return structure_; }

  // The flat parameter vector (layout in the file comment).
  size_t parameterCount() const { return static_cast<size_t>(parameters_.size()); }
  std::span<const double> parameters() const { return {parameters_.data(), parameterCount()}; }
  void setParameters(std::span<const double> parameters);
  // A policy on the same structure with other weights: an ES candidate.
  MlpPolicy withParameters(std::span<const double> parameters) const;

  // Forward pass. `logits` / `probabilities` have logitCount() values.
  void computeLogits(FeatureValues features, std::span<double> logits) const;
  void computeProbabilities(FeatureValues features, std::span<double> probabilities) const;
  // log softmax(logits)[action]
  double logProbability(FeatureValues features, int64_t action) const;
  // Entropy of softmax(logits), in nats.
  double entropy(FeatureValues features) const;

  // Backward pass: gradient += (d logits / d parameters)^T dLossDLogits, for
  // a loss whose gradient with respect to the logits of `features` is given.
  // `gradient` has parameterCount() values, in the flat layout.
  void accumulateGradient(FeatureValues features, std::span<const double> dLossDLogits,
                          std::span<double> gradient) const;
  // gradient += scale * d log π(action | features) / d parameters; returns
  // log π(action | features).
  double accumulateLogProbabilityGradient(FeatureValues features, int64_t action, double scale,
                                          std::span<double> gradient) const;
  // gradient += scale * d H(π(· | features)) / d parameters; returns H.
  double accumulateEntropyGradient(FeatureValues features, double scale,
                                   std::span<double> gradient) const;

private:
  struct Workspace;
  static Workspace& workspace();
  // Runs the network, leaving every layer's output in `work`; returns the logits.
  std::span<const double> forward(FeatureValues features, Workspace& work) const;
  // The layers on the network inputs already in `work`.
  std::span<const double> propagate(Workspace& work) const;
  // Unanimity: the policy's logits (MlpOptions::unanimousMembers) from the
  // members' outputs that `forward` left in `work`.
  std::span<const double> unanimousLogits(FeatureValues features, Workspace& work) const;
  // Unanimity: d loss / d members' outputs from d loss / d policy's logits
  // (through the smallest member's difference, a subgradient).
  void backwardUnanimous(FeatureValues features, Workspace& work, std::span<const double> dLogits,
                         std::span<double> gradient) const;
  // Candidate scoring: every candidate's score (-inf for invalid ones).
  const std::vector<double>& candidateScores(FeatureValues features, Workspace& work) const;
  // The policy's logits (forward, or every candidate's score).
  std::span<const double> policyLogits(FeatureValues features, Workspace& work) const;
  // Backpropagates d loss / d logits of `policyLogits(features)`: through the
  // activations `forward` left, or through each candidate's own pass.
  void backwardLogits(FeatureValues features, Workspace& work, std::span<const double> dLogits,
                      std::span<double> gradient) const;
  // Backpropagates `dLogits` through the activations `forward` left in `work`.
  void backward(Workspace& work, std::span<const double> dLogits, std::span<double> gradient) const;

  std::shared_ptr<const MlpStructure> structure_;
  Eigen::VectorXd parameters_;
};

} // namespace mlgo::policies
