// mlgo-corpus: build, inspect, merge and sample training corpora.
#include "TomlConfig.h"
#include "Validators.h"
#include "WriteLimits.h"
#include "mlgo/corpus/CommandLine.h"
#include "mlgo/corpus/Corpus.h"
#include "mlgo/corpus/Extract.h"
#include "mlgo/corpus/Merge.h"
#include "mlgo/corpus/Sampler.h"
#include "mlgo/corpus/Stats.h"

#include "FilterOptions.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace mlgo;
using namespace mlgo::corpus;

namespace {

int fail(const Error& error) {
  std::cerr << "mlgo-corpus: error: " << error.message << "\n";
  return 1;
}

std::string humanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

std::string shellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=:+,@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

struct ExtractArgs {
  std::string input;
  std::string output;
  size_t jobs = hardwareThreads();
  bool verbose = false;
};

int runExtract(const ExtractArgs& args) {
  fs::path input(args.input);
  Expected<std::vector<ObjectInput>> objects =
      fs::is_directory(input) ? findObjectsInDirectory(input) : findObjectsInCompileCommands(input);
  if (!objects)
    return fail(objects.error());
  std::cerr << "extract: " << objects->size() << " object files under " << input.string() << "\n";
  ExtractOptions options;
  options.threads = args.jobs;
  Expected<ExtractSummary> summary = extractCorpus(*objects, args.output, options);
  if (!summary)
    return fail(summary.error());
  for (const SkippedObject& skipped : summary->skipped)
    std::cerr << "warning: skipped " << skipped.object.string() << ": " << skipped.reason << "\n";
  const auto& without = summary->withoutEmbeddedBitcode;
  if (!without.empty()) {
    std::cerr << without.size() << " object(s) without embedded bitcode:\n";
    size_t shown = args.verbose ? without.size() : std::min<size_t>(without.size(), 10);
    for (size_t i = 0; i < shown; ++i)
      std::cerr << "  " << without[i].string() << "\n";
    if (shown < without.size())
      std::cerr << "  … and " << without.size() - shown << " more (--verbose lists all)\n";
  }
  std::printf("extracted %zu modules from %zu objects in %.2f s (%zu without embedded bitcode, "
              "%zu skipped) into %s\n",
              summary->modules.size(), summary->objectsScanned, summary->seconds, without.size(),
              summary->skipped.size(), args.output.c_str());
  return 0;
}

struct InfoArgs {
  std::string corpus;
  size_t jobs = hardwareThreads();
  bool perModule = false;
};

int runInfo(const InfoArgs& args) {
  Expected<Corpus> corpus = Corpus::load(args.corpus);
  if (!corpus)
    return fail(corpus.error());
  CorpusStats stats = computeCorpusStats(*corpus, args.jobs);
  if (args.perModule) {
    std::printf("%-48s %12s %10s %10s\n", "module", "bitcode", "functions", "callsites");
    for (const ModuleStats& m : stats.modules) {
      if (m.error)
        std::printf("%-48s %12llu  unreadable: %s\n", m.name.c_str(),
                    static_cast<unsigned long long>(m.bitcodeBytes), m.error->c_str());
      else
        std::printf("%-48s %12llu %10llu %10llu\n", m.name.c_str(),
                    static_cast<unsigned long long>(m.bitcodeBytes),
                    static_cast<unsigned long long>(m.definedFunctions),
                    static_cast<unsigned long long>(m.localCallSites));
    }
    std::printf("\n");
  }
  const CorpusDescription& d = corpus->description();
  std::printf("corpus           %s\n", corpus->directory().string().c_str());
  std::printf("modules          %zu\n", corpus->size());
  std::printf("has_thinlto      %s\n", d.hasThinLTO ? "true" : "false");
  std::printf("command lines    %s\n",
              d.globalCommandOverride ? "global_command_override" : "per module (.cmd)");
  std::printf("bitcode          %s total, %s median per module\n",
              humanBytes(static_cast<double>(stats.totalBitcodeBytes)).c_str(),
              humanBytes(stats.medianBitcodeBytes).c_str());
  std::printf("functions        %llu total, %.1f median per module\n",
              static_cast<unsigned long long>(stats.totalFunctions), stats.medianFunctions);
  std::printf("call sites       %llu total, %.1f median per module (direct calls to functions "
              "defined in the module)\n",
              static_cast<unsigned long long>(stats.totalCallSites), stats.medianCallSites);
  if (stats.unreadableModules) {
    std::printf("unreadable       %zu module(s) (--per-module lists them)\n",
                stats.unreadableModules);
    return 1;
  }
  return 0;
}

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string output;
};

int runMerge(const MergeArgs& args) {
  std::vector<MergeInput> inputs;
  for (const std::string& spec : args.inputs) {
    // DIR=PREFIX gives an explicit prefix.
    size_t eq = spec.rfind('=');
    if (eq != std::string::npos && eq > 0)
      inputs.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
    else
      inputs.push_back({spec, ""});
  }
  Expected<MergeSummary> summary = mergeCorpora(inputs, args.output);
  if (!summary)
    return fail(summary.error());
  std::printf("merged %zu corpora, %zu modules into %s\n", summary->corpora, summary->modules,
              args.output.c_str());
  return 0;
}

struct CommandArgs {
  std::string corpus;
  std::vector<std::string> modules;
  std::string object = "out.o";
  apps::FilterArgs filters;
};

int runCommand(const CommandArgs& args) {
  Expected<Corpus> corpus = Corpus::load(args.corpus);
  if (!corpus)
    return fail(corpus.error());
  Expected<CommandLineFilters> filters = args.filters.toFilters();
  if (!filters)
    return fail(filters.error());
  std::vector<const ModuleSpec*> modules;
  if (args.modules.empty()) {
    for (const ModuleSpec& m : corpus->modules())
      modules.push_back(&m);
  } else {
    for (const std::string& name : args.modules) {
      const ModuleSpec* m = corpus->find(name);
      if (!m)
        return fail(makeError(args.corpus + ": no module named \"" + name + "\""));
      modules.push_back(m);
    }
  }
  for (const ModuleSpec* m : modules) {
    fs::path object = modules.size() == 1 ? fs::path(args.object) : fs::path(m->name + ".o");
    Expected<std::vector<std::string>> command = buildCompileCommand(*m, *filters, object);
    if (!command)
      return fail(command.error());
    std::cout << shellQuote(MLGO_CLANG_PATH);
    for (const std::string& word : *command)
      std::cout << ' ' << shellQuote(word);
    std::cout << "\n";
  }
  return 0;
}

struct SampleArgs {
  std::string corpus;
  std::string strategy = "bucket-round-robin";
  size_t modulesPerStep = 8;
  uint64_t seed = 1;
  uint64_t steps = 1;
  uint64_t firstStep = 0;
};

int runSample(const SampleArgs& args) {
  Expected<Corpus> corpus = Corpus::load(args.corpus);
  if (!corpus)
    return fail(corpus.error());
  std::optional<SamplingStrategy> strategy = parseSamplingStrategy(args.strategy);
  if (!strategy)
    return fail(makeError("--strategy: unknown sampling strategy \"" + args.strategy + "\""));
  std::vector<uint64_t> sizes;
  std::vector<int> languages;
  for (const ModuleSpec& m : corpus->modules()) {
    sizes.push_back(m.bitcodeBytes);
    languages.push_back(static_cast<int>(moduleLanguage(m)));
  }
  ModuleSampler sampler(*strategy, sizes, args.seed, 20, languages);
  for (uint64_t step = args.firstStep; step < args.firstStep + args.steps; ++step) {
    std::cout << "step " << step << ":";
    for (size_t index : sampler.sample(step, args.modulesPerStep))
      std::cout << ' ' << corpus->modules()[index].name;
    std::cout << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  mlgo::apps::reportFileSizeLimitsAsWriteErrors();
  CLI::App app{"mlgo-corpus: build, inspect, merge and sample training corpora "
               "(ml-compiler-opt's corpus format)"};
  app.set_config("--config", "", "Read options from a TOML file ([extract], [info], … sections)");
  mlgo::apps::useStrictTomlConfig(app);
  app.require_subcommand(1);

  ExtractArgs extract;
  CLI::App* extractCmd = app.add_subcommand(
      "extract", "Extract modules (.llvmbc/.llvmcmd sections) from a build into a corpus");
  extractCmd
      ->add_option("input", extract.input,
                   "Directory of object files (searched recursively) or a "
                   "compile_commands.json")
      ->required();
  extractCmd->add_option("-o,--output", extract.output, "Corpus directory to write")->required();
  extractCmd->add_option("-j,--jobs", extract.jobs, "Parallel extraction threads")
      ->capture_default_str()
      ->check(mlgo::apps::kAtLeastOne);
  extractCmd->add_flag("-v,--verbose", extract.verbose, "List every object without bitcode");

  InfoArgs info;
  CLI::App* infoCmd = app.add_subcommand("info", "Summarise a corpus");
  infoCmd->add_option("corpus", info.corpus, "Corpus directory")->required();
  infoCmd->add_option("-j,--jobs", info.jobs, "Parallel threads")
      ->capture_default_str()
      ->check(mlgo::apps::kAtLeastOne);
  infoCmd->add_flag("--per-module", info.perModule, "Also print one line per module");

  MergeArgs merge;
  CLI::App* mergeCmd =
      app.add_subcommand("merge", "Merge corpora into one; module names get a prefix per corpus");
  mergeCmd
      ->add_option("inputs", merge.inputs,
                   "Corpus directories, each optionally DIR=PREFIX (default prefix: the "
                   "directory's name, or its parent's if it is called 'corpus')")
      ->required();
  mergeCmd->add_option("-o,--output", merge.output, "Merged corpus directory")->required();

  CommandArgs command;
  CLI::App* commandCmd = app.add_subcommand(
      "command", "Print the clang-22 command line that recompiles module(s) of a corpus");
  commandCmd->add_option("corpus", command.corpus, "Corpus directory")->required();
  commandCmd->add_option("modules", command.modules, "Module names (default: all)");
  commandCmd->add_option("--object", command.object, "Output object for a single module")
      ->capture_default_str();
  command.filters.addTo(*commandCmd);

  SampleArgs sample;
  CLI::App* sampleCmd =
      app.add_subcommand("sample", "Print the modules a sampler draws for given steps");
  sampleCmd->add_option("corpus", sample.corpus, "Corpus directory")->required();
  sampleCmd
      ->add_option(
          "--strategy", sample.strategy,
          "with-replacement | without-replacement | bucket-round-robin | language-stratified "
          "(half C, half C++ per step)")
      ->capture_default_str();
  sampleCmd->add_option("-k,--modules-per-step", sample.modulesPerStep, "Modules per step")
      ->capture_default_str()
      ->check(mlgo::apps::kAtLeastOne);
  sampleCmd->add_option("--seed", sample.seed, "Sampler seed")->capture_default_str();
  sampleCmd->add_option("--steps", sample.steps, "Number of steps to print")->capture_default_str();
  sampleCmd->add_option("--first-step", sample.firstStep, "First step")->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  if (*extractCmd)
    return runExtract(extract);
  if (*infoCmd)
    return runInfo(info);
  if (*mergeCmd)
    return runMerge(merge);
  if (*commandCmd)
    return runCommand(command);
  if (*sampleCmd)
    return runSample(sample);
  return 1;
}
