#include "mlgo/evaluators/Ir2VecTriplets.h"

#include "mlgo/evaluators/Process.h"
#include "mlgo/support/Files.h"
#include "mlgo/support/Progress.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace mlgo::evaluators {

namespace fs = std::filesystem;

namespace {

// Runs `tool arguments…`, its output captured in `directory`; the output, or
// an error with the tool's message.
Expected<std::string> runTool(const std::string& tool, const std::vector<std::string>& arguments,
                              const fs::path& directory, const fs::path& output) {
  const fs::path log = directory / "tool.log";
  Expected<ChildProcess> child = ChildProcess::spawn(tool, arguments, log);
  if (!child)
    return makeError("cannot start " + tool + ": " + child.error().message);
  std::optional<ExitStatus> status = child->waitUntil(Clock::now() + std::chrono::minutes(5));
  if (!status)
    return makeError(tool + " did not finish within 5 minutes");
  if (!status->succeeded())
    return makeError(tool + " ended with " + status->describe() + ": " + readTail(log));
  return readFileBytes(output);
}

} // namespace

std::string ir2vecToolBeside(const std::string& clang) {
  return (fs::path(clang).parent_path() / "llvm-ir2vec").string();
}

Expected<Ir2VecTrainingData> collectIr2VecTriplets(const std::vector<corpus::Corpus>& corpora,
                                                   const std::string& tool, const fs::path& scratch,
                                                   size_t workers) {
  Expected<ScratchDirectory> directory = ScratchDirectory::create(scratch, "mlgo-ir2vec-");
  if (!directory)
    return directory.error();
  Ir2VecTrainingData data;
  const fs::path entitiesFile = directory->path() / "entities.txt";
  Expected<std::string> entities =
      runTool(tool, {"entities", "--mode=llvm", "-o", entitiesFile.string()}, directory->path(),
              entitiesFile);
  if (!entities)
    return entities.error();
  Expected<std::vector<std::string>> names = policies::parseIr2VecEntities(*entities);
  if (!names)
    return makeError(tool + " entities: " + names.error().message);
  data.entities = names.take();

  std::vector<const corpus::ModuleSpec*> modules;
  for (const corpus::Corpus& corpus : corpora)
    for (const corpus::ModuleSpec& module : corpus.modules())
      modules.push_back(&module);
  // Each module's triplets and outcome in its own slot: the result does not
  // depend on the scheduling.
  std::vector<std::vector<policies::Ir2VecTriplet>> found(modules.size());
  std::vector<std::optional<Error>> failed(modules.size());
  std::vector<uint32_t> maxRelation(modules.size(), 0);
  std::vector<size_t> readCount(modules.size(), 0);
  ProgressLine progress("ir2vec triplets", modules.size());
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            std::max<size_t>(1, workers));
  tbb::parallel_for(size_t{0}, modules.size(), [&](size_t i) {
    const corpus::ModuleSpec& module = *modules[i];
    auto fail = [&](const std::string& why) { failed[i] = makeError(module.name + ": " + why); };
    Expected<ScratchDirectory> own = ScratchDirectory::create(directory->path(), "module-");
    if (!own)
      return fail(own.error().message);
    const fs::path output = own->path() / "triplets.txt";
    Expected<std::string> text =
        runTool(tool, {"triplets", "--mode=llvm", module.bitcode.string(), "-o", output.string()},
                own->path(), output);
    if (!text)
      return fail(text.error().message);
    Expected<uint32_t> relations =
        policies::parseIr2VecTriplets(*text, data.entities.size(), found[i]);
    if (!relations)
      return fail(relations.error().message);
    maxRelation[i] = *relations;
    readCount[i] = found[i].size();
    std::sort(found[i].begin(), found[i].end());
    found[i].erase(std::unique(found[i].begin(), found[i].end()), found[i].end());
    progress.advance();
  });
  for (size_t i = 0; i < modules.size(); ++i) {
    if (failed[i])
      return *failed[i];
    data.tripletsRead += readCount[i];
    data.relations = std::max(data.relations, maxRelation[i] + 1);
    data.triplets.insert(data.triplets.end(), found[i].begin(), found[i].end());
  }
  progress.finish();
  std::sort(data.triplets.begin(), data.triplets.end());
  data.triplets.erase(std::unique(data.triplets.begin(), data.triplets.end()), data.triplets.end());
  data.modules = modules.size();
  return data;
}

} // namespace mlgo::evaluators
