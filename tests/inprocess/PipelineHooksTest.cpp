// The pass-pipeline task's compiler side on the real zlib and Lua corpora,
// calling the worker's compile directly: every coordinate of the structured
// space names a pass -Oz really runs and can skip, phases split a class's
// runs, added passes run even when their class is skipped, a replacement
// leaves -Oz's own passes out, and what LLVM cannot parse is refused by name.
#include "PipelineHooks.h"
#include "OzPipeline.h"
#include "PipelineCompiler.h"

#include "ModuleFeatures.h"

#include "TestSupport.h"
#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/Extract.h"
#include "mlgo/policies/PassPipeline.h"

#include <gtest/gtest.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cstdio>
#include <map>

namespace mlgo::inprocess {
namespace {

namespace protocol = evaluators::protocol;
using policies::PassPipeline;
using policies::PipelinePhase;
using policies::SkippedPass;

struct Compiled {
  protocol::ResultMessage result;
  PipelineReport report;
};

class PipelineHooks : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    for (const char* name : {"zlib", "lua"}) {
      Expected<corpus::Corpus> loaded =
          corpus::Corpus::load(mlgo::testing::realCorpusDirectory(name));
      ASSERT_TRUE(loaded) << loaded.error().message;
      corpora().push_back(std::make_unique<corpus::Corpus>(loaded.take()));
    }
  }
  static std::vector<std::unique_ptr<corpus::Corpus>>& corpora() {
    static std::vector<std::unique_ptr<corpus::Corpus>> loaded;
    return loaded;
  }

  protocol::JobMessage job(const corpus::ModuleSpec& module) {
    Expected<std::vector<std::string>> command = corpus::buildCompileCommand(
        module, corpus::CommandLineFilters{}, scratch_.path() / "module.o");
    EXPECT_TRUE(command) << command.error().message;
    protocol::JobMessage message;
    message.arguments = command ? command.take() : std::vector<std::string>{};
    message.moduleName = module.name;
    message.taskName = "pass-pipeline";
    message.route = evaluators::InProcessRoute::PassPipeline;
    message.sizeSections = {"."};
    return message;
  }

  Compiled compile(const corpus::ModuleSpec& module, const PassPipeline* pipeline) {
    Compiled compiled;
    policies::PipelinePolicy policy(pipeline ? *pipeline : PassPipeline{});
    compiled.result = compilePipeline(job(module), pipeline ? &policy : nullptr, &compiled.report);
    EXPECT_EQ(compiled.result.status, protocol::WorkerStatus::Ok)
        << module.name << ": " << compiled.result.message;
    return compiled;
  }

  // Every module of both corpora under `pipeline`: the declines summed.
  PipelineReport compileAll(const PassPipeline& pipeline, std::vector<uint64_t>* hashes = nullptr) {
    PipelineReport total;
    for (const auto& corpus : corpora())
      for (const corpus::ModuleSpec& module : corpus->modules()) {
        Compiled compiled = compile(module, &pipeline);
        for (const auto& [rule, count] : compiled.report.declined)
          total.declined[rule] += count;
        total.declinedAfterReplacement += compiled.report.declinedAfterReplacement;
        if (hashes)
          hashes->push_back(compiled.result.codeHash);
      }
    return total;
  }

  mlgo::testing::ScratchDirectory scratch_;
};

// A made-up IR2Vec vocabulary of width 3: a few opcodes, types and operand
// kinds (the rest embed as zeros).
policies::Ir2VecVocabulary smallVocabulary() {
  policies::Ir2VecVocabulary vocabulary;
  const char* names[] = {"Load",      "Store",    "Call",    "Br",       "Add",     "IntegerTy",
                         "PointerTy", "Function", "Pointer", "Constant", "Variable"};
  for (size_t i = 0; i < std::size(names); ++i) {
    vocabulary.entities.push_back(names[i]);
    vocabulary.embeddings.push_back(
        {0.1 * static_cast<double>(i), 1.0 / (1.0 + i), i % 2 ? -0.5 : 0.25});
  }
  return vocabulary;
}

// A choice among `pipelines` that always answers `label`: one example, one
// neighbour; `heuristicInliner` as PipelineChoice has it; with `embedding`,
// its features end with the module's IR2Vec embedding.
std::shared_ptr<const policies::PipelineChoice>
alwaysChoosing(std::vector<PassPipeline> pipelines, size_t label,
               std::vector<size_t> heuristicInliner = {},
               std::optional<policies::Ir2VecVocabulary> embedding = std::nullopt) {
  auto choice = std::make_shared<policies::PipelineChoice>();
  choice->pipelines = std::move(pipelines);
  choice->heuristicInliner = std::move(heuristicInliner);
  choice->embedding = std::move(embedding);
  choice->features = policies::moduleFeatureNames(choice->embeddingDimension());
  choice->mean.assign(choice->features.size(), 0.0);
  choice->scale.assign(choice->features.size(), 1.0);
  choice->neighbours = 1;
  choice->examples = {{std::vector<double>(choice->features.size(), 0.0), label, {}}};
  EXPECT_TRUE(choice->validate());
  return choice;
}

TEST_F(PipelineHooks, EveryListedPassRunsInOzAndCanBeSkipped) {
  PassPipeline all;
  for (const std::string& passClass : policies::ozPassClasses())
    all.skipped.push_back({passClass, std::nullopt});
  ASSERT_TRUE(all.validate());
  const PipelineReport report = compileAll(all);
  for (const std::string& passClass : policies::ozPassClasses())
    EXPECT_GT(report.declined.count(passClass) ? report.declined.at(passClass) : 0, 0u)
        << passClass << " never ran in -Oz on zlib and Lua (not a coordinate of this LLVM's "
        << "pipeline?)";
}

TEST_F(PipelineHooks, PhasesSplitAClassRuns) {
  // Skipped in each phase: each declines some runs and gives other code.
  std::vector<std::vector<uint64_t>> objects;
  PassPipeline phases;
  for (PipelinePhase phase : {PipelinePhase::Early, PipelinePhase::Inliner, PipelinePhase::Late}) {
    PassPipeline one;
    one.skipped = {{"InstCombinePass", phase}};
    phases.skipped.push_back(one.skipped[0]);
    EXPECT_GT(compileAll(one, &objects.emplace_back()).declined[one.skipped[0].text()], 0u)
        << one.skipped[0].text();
  }
  EXPECT_NE(objects[0], objects[1]);
  EXPECT_NE(objects[1], objects[2]);
  // Skipped in all three: skipped everywhere, run for run.
  PassPipeline everywhere;
  everywhere.skipped = {{"InstCombinePass", std::nullopt}};
  std::vector<uint64_t> byPhases, byClass;
  const PipelineReport split = compileAll(phases, &byPhases);
  const PipelineReport whole = compileAll(everywhere, &byClass);
  EXPECT_EQ(byPhases, byClass);
  uint64_t sum = 0;
  for (const auto& [rule, count] : split.declined)
    sum += count;
  EXPECT_EQ(sum, whole.declined.at("InstCombinePass"));
}

TEST_F(PipelineHooks, AddedPassesRunEvenWhenTheirClassIsSkipped) {
  PassPipeline skipOnly;
  skipOnly.skipped = {{"InstCombinePass", PipelinePhase::Late}};
  PassPipeline withAddition = skipOnly;
  withAddition.additions = {
      {policies::ExtensionPoint::OptimizerLast, "function(instcombine<no-verify-fixpoint>)"}};
  std::vector<uint64_t> skipped, added;
  const PipelineReport a = compileAll(skipOnly, &skipped);
  const PipelineReport b = compileAll(withAddition, &added);
  // The added instcombine is never declined: the same count either way.
  EXPECT_EQ(a.declined.at("InstCombinePass@late"), b.declined.at("InstCombinePass@late"));
  EXPECT_NE(skipped, added) << "the added instcombine changed no module";
}

// A choice among pipelines: whichever it chooses compiles exactly what that
// pipeline alone compiles (the others' added passes, a loop pipeline's
// canonicalisation included, leave nothing behind), and what it reads when
// the pipeline starts is what training reads from the module's bitcode: the
// counts, and (the second choice) the IR2Vec embedding too.
TEST_F(PipelineHooks, AChoiceCompilesWhatItsChosenPipelineCompiles) {
  PassPipeline a, b;
  a.skipped = {{"JumpThreadingPass", std::nullopt}};
  a.additions = {{policies::ExtensionPoint::OptimizerLast, "mergefunc"}};
  b.skipped = {{"LoopRotatePass", PipelinePhase::Late}};
  b.additions = {{policies::ExtensionPoint::VectorizerStart, "loop(loop-deletion)"},
                 {policies::ExtensionPoint::Peephole, "instsimplify"}};
  auto always = [&](size_t label) {
    // The second reads an IR2Vec embedding as well.
    return policies::PipelinePolicy(
        PassPipeline{}, nullptr,
        alwaysChoosing({a, b}, label, {},
                       label == 1 ? std::optional(smallVocabulary()) : std::nullopt));
  };
  const ModuleEmbedder embedder(smallVocabulary());
  size_t embedded = 0;
  const policies::PipelinePolicy chooseA = always(0), chooseB = always(1);
  const policies::PipelinePolicy aloneA(a), aloneB(b);
  size_t modules = 0, differ = 0;
  for (const auto& corpus : corpora())
    for (size_t m = 0; m < corpus->modules().size(); m += 3) {
      const corpus::ModuleSpec& module = corpus->modules()[m];
      std::vector<uint64_t> hashes;
      for (const policies::PipelinePolicy* policy : {&aloneA, &chooseA, &aloneB, &chooseB}) {
        PipelineReport report;
        const protocol::ResultMessage result = compilePipeline(job(module), policy, &report);
        ASSERT_EQ(result.status, protocol::WorkerStatus::Ok)
            << module.name << ": " << result.message;
        hashes.push_back(result.codeHash);
        if (!policy->choice())
          continue;
        ASSERT_TRUE(report.chosen) << module.name;
        EXPECT_EQ(*report.chosen, policy == &chooseA ? 0u : 1u);
        llvm::LLVMContext context;
        auto buffer = llvm::MemoryBuffer::getFile(module.bitcode.string());
        ASSERT_TRUE(buffer) << module.bitcode;
        auto parsed = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), context);
        ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
        EXPECT_EQ(report.counted, countModule(**parsed)) << module.name;
        const ModuleEmbedder* reads = policy == &chooseB ? &embedder : nullptr;
        EXPECT_EQ(report.features, moduleFeatures(**parsed, report.counted, reads)) << module.name;
        EXPECT_EQ(report.features.size(), policy->choice()->features.size());
        if (reads)
          embedded += std::any_of(report.features.begin() + policies::moduleFeatureNames().size(),
                                  report.features.end(), [](double x) { return x != 0; });
      }
      EXPECT_EQ(hashes[0], hashes[1]) << module.name << ": chosen a differs from a alone";
      EXPECT_EQ(hashes[2], hashes[3]) << module.name << ": chosen b differs from b alone";
      differ += hashes[0] != hashes[2];
      ++modules;
    }
  EXPECT_GT(differ, 0u) << "the two pipelines compiled the same code on all " << modules
                        << " modules: the test shows nothing";
  EXPECT_EQ(embedded, modules) << "a module whose embedding is all zeros";
}

// A choice among pipelines run in -Oz's own pipeline and pipelines with
// pass parameters (-Oz's text, parsed before the module is seen, run only
// if chosen): each chosen one compiles what it compiles alone, its skips,
// phases and additions included, with an inliner policy deciding in both
// kinds.
TEST_F(PipelineHooks, AChoiceMayHoldPassParameters) {
  PassPipeline inOz, tuned, tunedToo;
  inOz.skipped = {{"JumpThreadingPass", std::nullopt}};
  inOz.additions = {{policies::ExtensionPoint::Peephole, "instsimplify"}};
  tuned.parameters = {{"gvn", "no-load-pre"}};
  tuned.skipped = {{"LoopRotatePass", PipelinePhase::Late}};
  tuned.additions = {{policies::ExtensionPoint::OptimizerLast, "mergefunc"}};
  tunedToo.parameters = {{"gvn", "no-pre"}};
  tunedToo.skipped = {{"InstCombinePass", PipelinePhase::Inliner}};
  const std::vector<PassPipeline> set = {inOz, tuned, tunedToo};
  std::shared_ptr<const policies::Policy> never = policies::makeConstantPolicy(0);
  std::vector<std::vector<uint64_t>> alone(set.size());
  size_t asked = 0;
  for (size_t p = 0; p < set.size(); ++p) {
    const policies::PipelinePolicy single(set[p], never);
    const policies::PipelinePolicy choosing(PassPipeline{}, never, alwaysChoosing(set, p, {}));
    for (const auto& corpus : corpora())
      for (size_t m = 0; m < corpus->modules().size(); m += 3) {
        const corpus::ModuleSpec& module = corpus->modules()[m];
        PipelineReport report;
        const protocol::ResultMessage a = compilePipeline(job(module), &single, nullptr),
                                      b = compilePipeline(job(module), &choosing, &report);
        ASSERT_EQ(b.status, protocol::WorkerStatus::Ok) << module.name << ": " << b.message;
        ASSERT_TRUE(report.chosen) << module.name;
        EXPECT_EQ(*report.chosen, p);
        EXPECT_EQ(a.codeHash, b.codeHash) << module.name << ": chosen " << set[p].describe();
        EXPECT_EQ(a.decisions, b.decisions) << module.name << ": chosen " << set[p].describe();
        alone[p].push_back(a.codeHash);
        asked += b.decisions;
      }
  }
  EXPECT_NE(alone[0], alone[1]);
  EXPECT_NE(alone[1], alone[2]);
  EXPECT_GT(asked, 0u) << "the inliner policy was never asked";
}

// A choice whose alternatives differ only in who inlines: the one with the
// pipeline policy's inliner compiles what the pipeline with that inliner
// compiles, the one listed in heuristicInliner what the pipeline alone
// (LLVM's heuristic) compiles, and asks the policy nothing.
TEST_F(PipelineHooks, AChoiceCanGiveAModuleLlvmsInliner) {
  // Also between two -Oz alternatives that differ only in who inlines (a
  // module-level guard for an inliner policy): the choice must still run.
  PassPipeline skipping;
  skipping.skipped = {{"JumpThreadingPass", std::nullopt}};
  for (const PassPipeline& a : {skipping, PassPipeline{}}) {
    std::shared_ptr<const policies::Policy> never = policies::makeConstantPolicy(0);
    auto always = [&](size_t label) {
      return policies::PipelinePolicy(PassPipeline{}, never, alwaysChoosing({a, a}, label, {1}));
    };
    const policies::PipelinePolicy withPolicy = always(0), withHeuristic = always(1);
    const policies::PipelinePolicy aloneNever(a, never), alone(a);
    size_t differ = 0;
    for (const auto& corpus : corpora())
      for (size_t m = 0; m < corpus->modules().size(); m += 3) {
        const corpus::ModuleSpec& module = corpus->modules()[m];
        std::vector<protocol::ResultMessage> results;
        for (const policies::PipelinePolicy* policy :
             {&aloneNever, &withPolicy, &alone, &withHeuristic}) {
          results.push_back(compilePipeline(job(module), policy, nullptr));
          ASSERT_EQ(results.back().status, protocol::WorkerStatus::Ok)
              << module.name << ": " << results.back().message;
        }
        EXPECT_EQ(results[0].codeHash, results[1].codeHash) << module.name;
        EXPECT_EQ(results[0].decisions, results[1].decisions) << module.name;
        EXPECT_EQ(results[2].codeHash, results[3].codeHash) << module.name;
        EXPECT_EQ(results[3].decisions, 0u) << module.name << ": the policy was asked";
        differ += results[0].codeHash != results[2].codeHash;
      }
    EXPECT_GT(differ, 0u) << "never inlining changed no module: the test shows nothing ("
                          << a.describe() << ")";
  }
}

TEST_F(PipelineHooks, AReplacementLeavesOzsOwnPassesOut) {
  PassPipeline replaced;
  replaced.replacement = "function(sroa)";
  std::vector<uint64_t> sroaOnly, oz;
  EXPECT_GT(compileAll(replaced, &sroaOnly).declinedAfterReplacement, 0u);
  compileAll(PassPipeline{}, &oz);
  EXPECT_NE(sroaOnly, oz);
  // -Oz again as a replacement runs inside clang's pipeline, after its first
  // few module passes: close to -Oz's code, not always the same (zlib's
  // deflate.o: 12,132 against 12,153 bytes), so only the sizes are compared.
  auto total = [&](const PassPipeline& pipeline) {
    uint64_t bytes = 0;
    for (const auto& corpus : corpora())
      for (const corpus::ModuleSpec& module : corpus->modules())
        bytes += compile(module, &pipeline).result.sizeBytes;
    return static_cast<double>(bytes);
  };
  replaced.replacement = "default<Oz>";
  const double ozBytes = total(PassPipeline{});
  EXPECT_NEAR(total(replaced) / ozBytes, 1.0, 0.01);
  replaced.replacement = "function(sroa)";
  EXPECT_GT(total(replaced), 1.02 * ozBytes);
}

// C++ where -Oz's two vector-combine runs matter: 2x2 and 3x3 solves on
// small float vectors (a physics engine's joint step).
const char* kVectorSource = R"(
struct V2 { float x, y; };
struct V3 { float x, y, z; };
struct M33 { V3 ex, ey, ez; };
static inline float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline V3 cross(V3 a, V3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
V3 solve33(const M33& m, V3 b) {
  float det = dot(m.ex, cross(m.ey, m.ez));
  if (det != 0.0f) det = 1.0f / det;
  return {det * dot(b, cross(m.ey, m.ez)), det * dot(m.ex, cross(b, m.ez)), det * dot(m.ex, cross(m.ey, b))};
}
V2 solve22(const M33& m, V2 b) {
  float a11 = m.ex.x, a12 = m.ey.x, a21 = m.ex.y, a22 = m.ey.y;
  float det = a11 * a22 - a12 * a21;
  if (det != 0.0f) det = 1.0f / det;
  return {det * (a22 * b.x - a12 * b.y), det * (a11 * b.y - a21 * b.x)};
}
void inverse22(const M33& m, M33* out) {
  float a = m.ex.x, b = m.ey.x, c = m.ex.y, d = m.ey.y;
  float det = a * d - b * c;
  if (det != 0.0f) det = 1.0f / det;
  out->ex.x = det * d; out->ey.x = -det * b; out->ex.z = 0.0f;
  out->ex.y = -det * c; out->ey.y = det * a; out->ey.z = 0.0f;
  out->ez.x = 0.0f; out->ez.y = 0.0f; out->ez.z = 0.0f;
}
struct Body { V2 c; float a; V2 v; float w; };
void step(Body* bodies, int n, const M33& k, float h) {
  for (int i = 0; i < n; ++i) {
    V2 cdot = {bodies[i].v.x - bodies[i].w * bodies[i].c.y, bodies[i].v.y + bodies[i].w * bodies[i].c.x};
    V2 imp = solve22(k, cdot);
    bodies[i].v.x -= h * imp.x; bodies[i].v.y -= h * imp.y;
    bodies[i].w -= h * (bodies[i].c.x * imp.y - bodies[i].c.y * imp.x);
    V3 c3 = {bodies[i].c.x, bodies[i].c.y, bodies[i].a};
    V3 s = solve33(k, c3);
    bodies[i].c.x -= s.x; bodies[i].c.y -= s.y; bodies[i].a -= s.z;
  }
}
)";

// clang's own -Oz pipeline as text (-mllvm -print-pipeline-passes).
std::string printedOzPipeline() {
  const std::string command = mlgo::testing::clangPath() +
                              " -Oz -mllvm -print-pipeline-passes -x c -c /dev/null -o /dev/null";
  std::string text;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      text.append(buffer, n);
    if (pclose(pipe) != 0)
      text.clear();
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

// That text, given back as a replacement, is -Oz exactly (the same code on
// every module of zlib and Lua, and on C++ with small float vectors), once
// its first vector-combine, the function simplification's early-folds one
// that the text prints as a full one, is named "vector-combine-early" (a
// pass name of ours). This is what makes an edit of the text (a pass's
// parameters) an action around -Oz.
TEST_F(PipelineHooks, ClangsPrintedOzPipelineIsOzExactly) {
  std::string text = printedOzPipeline();
  const size_t early = text.find("vector-combine");
  ASSERT_NE(early, std::string::npos) << "no pipeline printed: \"" << text << "\"";
  ASSERT_NE(text.find("vector-combine", early + 1), std::string::npos)
      << "-Oz runs vector-combine twice: early folds, then the full pass";
  PassPipeline printed;
  printed.replacement = text;
  printed.replacement.replace(early, std::string("vector-combine").size(), "vector-combine-early");
  ASSERT_TRUE(checkPipelineTexts(printed));
  std::vector<uint64_t> replaced, oz;
  compileAll(printed, &replaced);
  compileAll(PassPipeline{}, &oz);
  EXPECT_EQ(replaced, oz);
  // The C++ module: -Oz exactly with the early pass named, not without.
  mlgo::testing::compileWithEmbeddedBitcode(kVectorSource, scratch_.path() / "vectors/v.o", ".cpp");
  Expected<corpus::ExtractSummary> extracted = corpus::extractCorpus(
      {{scratch_.path() / "vectors/v.o", "v.o"}}, scratch_.path() / "vectors/corpus", {});
  ASSERT_TRUE(extracted) << extracted.error().message;
  Expected<corpus::Corpus> vectors = corpus::Corpus::load(scratch_.path() / "vectors/corpus");
  ASSERT_TRUE(vectors) << vectors.error().message;
  const corpus::ModuleSpec& module = vectors->modules().front();
  const uint64_t ozHash = compile(module, nullptr).result.codeHash;
  EXPECT_EQ(compile(module, &printed).result.codeHash, ozHash);
  PassPipeline asPrinted;
  asPrinted.replacement = text;
  EXPECT_NE(compile(module, &asPrinted).result.codeHash, ozHash)
      << "the full vector-combine in the early one's place no longer changes this code";
}

// Pass parameters run -Oz as its text (OzPipeline.h): the text is clang's
// own, a pass given its default parameters is -Oz exactly, other
// parameters change code, skips keep their phases in the text, added
// passes run where their extension point is, and an inliner policy decides
// there as in -Oz.
TEST_F(PipelineHooks, PassParametersEditOzsOwnText) {
  EXPECT_EQ(printedOzPipeline(), [] {
    std::string text = ozPipelineText();
    text.replace(text.find("vector-combine-early"), std::string("vector-combine-early").size(),
                 "vector-combine");
    return text;
  }()) << "clang's -Oz pipeline is no longer the one OzPipeline.cpp writes out";
  std::vector<uint64_t> oz, defaults, noPre;
  compileAll(PassPipeline{}, &oz);
  PassPipeline tuned;
  tuned.parameters = {{"gvn", ""}};
  compileAll(tuned, &defaults);
  EXPECT_EQ(defaults, oz);
  tuned.parameters = {{"gvn", "no-pre"}};
  compileAll(tuned, &noPre);
  EXPECT_NE(noPre, oz);
  // A skip in a phase declines the same runs in the text as in -Oz.
  for (const char* skip : {"InstCombinePass@inliner", "LoopRotatePass@late", "SROAPass@early"}) {
    PassPipeline skipped;
    skipped.skipped = {*policies::parseSkippedPass(skip)};
    std::vector<uint64_t> inOz, inText;
    const PipelineReport ozDeclines = compileAll(skipped, &inOz);
    skipped.parameters = {{"gvn", ""}};
    const PipelineReport textDeclines = compileAll(skipped, &inText);
    EXPECT_EQ(textDeclines.declined, ozDeclines.declined) << skip;
    EXPECT_EQ(inText, inOz) << skip;
  }
  // Added passes at the points the text takes them run where the
  // extension point runs them, between markers (a skipped class does not
  // decline them): the same code as in -Oz.
  PassPipeline added;
  added.skipped = {{"SimplifyCFGPass", PipelinePhase::Late}};
  added.additions = {{policies::ExtensionPoint::OptimizerLast, "mergefunc"},
                     {policies::ExtensionPoint::ScalarOptimizerLate, "gvn-hoist,simplifycfg"},
                     {policies::ExtensionPoint::OptimizerLast,
                      "function(instcombine<no-verify-fixpoint>,simplifycfg)"}};
  std::vector<uint64_t> addedInOz, addedInText;
  compileAll(added, &addedInOz);
  EXPECT_NE(addedInOz, oz);
  added.parameters = {{"gvn", ""}};
  compileAll(added, &addedInText);
  EXPECT_EQ(addedInText, addedInOz);
  // An inliner policy decides in the text as in -Oz: the same decisions
  // asked and the same code (a never-inline policy, so that it differs
  // from LLVM's heuristic).
  std::shared_ptr<const policies::Policy> never = policies::makeConstantPolicy(0);
  PassPipeline defaultParameters;
  defaultParameters.parameters = {{"gvn", ""}};
  const policies::PipelinePolicy inOz(PassPipeline{}, never), inText(defaultParameters, never);
  size_t asked = 0;
  for (const auto& corpus : corpora())
    for (size_t m = 0; m < corpus->modules().size(); m += 3) {
      const corpus::ModuleSpec& module = corpus->modules()[m];
      const protocol::ResultMessage a = compilePipeline(job(module), &inOz, nullptr),
                                    b = compilePipeline(job(module), &inText, nullptr);
      ASSERT_EQ(b.status, protocol::WorkerStatus::Ok) << module.name << ": " << b.message;
      EXPECT_EQ(a.codeHash, b.codeHash) << module.name;
      EXPECT_EQ(a.decisions, b.decisions) << module.name;
      asked += b.decisions;
    }
  EXPECT_GT(asked, 0u) << "the inliner policy was never asked in -Oz's text";
  PassPipeline unknown;
  unknown.parameters = {{"no-such-pass", ""}};
  Status refused = checkPipelineTexts(unknown);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no-such-pass"), std::string::npos);
  unknown.parameters = {{"gvn", "no-such-parameter"}};
  EXPECT_FALSE(checkPipelineTexts(unknown));
}

TEST_F(PipelineHooks, WhatLlvmCannotParseIsRefusedByName) {
  const corpus::ModuleSpec& module = corpora()[0]->modules().front();
  PassPipeline wrongKind;
  wrongKind.additions = {{policies::ExtensionPoint::Peephole, "globaldce"}}; // a module pass
  policies::PipelinePolicy policy(wrongKind);
  protocol::ResultMessage refused = compilePipeline(job(module), &policy);
  EXPECT_EQ(refused.status, protocol::WorkerStatus::SetupFailed);
  EXPECT_NE(refused.message.find("added passes at peephole \"globaldce\""), std::string::npos)
      << refused.message;

  PassPipeline unknown;
  unknown.replacement = "function(no-such-pass)";
  policies::PipelinePolicy bad(unknown);
  refused = compilePipeline(job(module), &bad);
  EXPECT_EQ(refused.status, protocol::WorkerStatus::SetupFailed);
  EXPECT_NE(refused.message.find("no-such-pass"), std::string::npos) << refused.message;

  std::unique_ptr<policies::Policy> inliner = policies::makeConstantPolicy(0);
  refused = compilePipeline(job(module), inliner.get());
  EXPECT_EQ(refused.status, protocol::WorkerStatus::PolicyMismatch);
  EXPECT_NE(refused.message.find("needs a pipeline policy"), std::string::npos) << refused.message;
}

} // namespace
} // namespace mlgo::inprocess
