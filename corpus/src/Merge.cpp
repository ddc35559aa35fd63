#include "mlgo/corpus/Merge.h"

#include "mlgo/corpus/Corpus.h"

#include <algorithm>
#include <set>

namespace fs = std::filesystem;

namespace mlgo::corpus {

namespace {

// Hard link when source and output share a file system (no copy of the
// bitcode), a copy otherwise.
Status linkOrCopy(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec)
    return makeError(to.parent_path().string() + ": cannot create: " + ec.message());
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (!ec)
    return Status::ok();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    return makeError("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
  return Status::ok();
}

} // namespace

std::string defaultMergePrefix(const fs::path& directory) {
  fs::path normal = directory.lexically_normal();
  if (normal.filename().empty())
    normal = normal.parent_path();
  if (normal.filename() == "corpus" && normal.has_parent_path())
    return normal.parent_path().filename().string();
  return normal.filename().string();
}

Expected<MergeSummary> mergeCorpora(const std::vector<MergeInput>& inputs,
                                    const fs::path& outputDirectory) {
  if (inputs.empty())
    return makeError("merge needs at least one input corpus");
  // The output is written module by module: it must not be (or hold) an
  // input, nor a directory with anything in it already.
  std::error_code ec;
  fs::path output = fs::weakly_canonical(outputDirectory, ec);
  for (const MergeInput& input : inputs) {
    fs::path in = fs::weakly_canonical(input.directory, ec);
    auto [o, i] = std::mismatch(output.begin(), output.end(), in.begin(), in.end());
    if (o == output.end() || i == in.end())
      return makeError(outputDirectory.string() + ": the merged corpus would overwrite its input " +
                       input.directory.string() + "; choose another output directory");
  }
  if (fs::is_directory(outputDirectory, ec) && !fs::is_empty(outputDirectory, ec))
    return makeError(outputDirectory.string() + ": not empty; merge into a new or empty directory");
  std::vector<Corpus> corpora;
  std::vector<std::string> prefixes;
  std::set<std::string> seenPrefixes;
  for (const MergeInput& input : inputs) {
    Expected<Corpus> corpus = Corpus::load(input.directory);
    if (!corpus)
      return corpus.error();
    std::string prefix = input.prefix.empty() ? defaultMergePrefix(input.directory) : input.prefix;
    if (prefix.empty() || prefix.find('/') != std::string::npos || prefix == "..")
      return makeError(input.directory.string() + ": invalid prefix \"" + prefix + "\"");
    if (!seenPrefixes.insert(prefix).second)
      return makeError(input.directory.string() + ": prefix \"" + prefix +
                       "\" is used by two inputs; give explicit prefixes (DIR=PREFIX)");
    if (!corpora.empty() &&
        corpus->description().hasThinLTO != corpora.front().description().hasThinLTO)
      return makeError(input.directory.string() + ": has_thinlto differs from " +
                       corpora.front().directory().string() + "; cannot merge");
    corpora.push_back(corpus.take());
    prefixes.push_back(prefix);
  }

  CorpusDescription merged;
  merged.hasThinLTO = corpora.front().description().hasThinLTO;
  for (size_t c = 0; c < corpora.size(); ++c) {
    for (const ModuleSpec& module : corpora[c].modules()) {
      std::string name = prefixes[c] + "/" + module.name;
      fs::path base = outputDirectory / name;
      if (Status s = linkOrCopy(module.bitcode, fs::path(base.string() + ".bc")); !s)
        return s.error();
      if (module.thinLTOIndex)
        if (Status s = linkOrCopy(*module.thinLTOIndex, fs::path(base.string() + ".thinlto.bc"));
            !s)
          return s.error();
      // Written rather than linked: an override becomes the module's own .cmd.
      if (Status s = writeFileBytes(fs::path(base.string() + ".cmd"),
                                    joinCommandFile(module.storedCommand));
          !s)
        return s.error();
      merged.modules.push_back(std::move(name));
    }
  }
  if (Status s = writeCorpusDescription(outputDirectory / kDescriptionFile, merged); !s)
    return s.error();
  return MergeSummary{corpora.size(), merged.modules.size()};
}

} // namespace mlgo::corpus
