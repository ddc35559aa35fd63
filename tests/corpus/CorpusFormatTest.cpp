#include "TestSupport.h"
#include "mlgo/corpus/Corpus.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace mlgo::corpus {
namespace {

using mlgo::testing::ScratchDirectory;
using mlgo::testing::writeText;

const char kCommandBytes[] = "-cc1\0-triple\0x86_64-pc-linux-gnu\0-Oz\0-emit-obj";
const std::string kCommand(kCommandBytes, sizeof kCommandBytes - 1);

// A corpus as ml-compiler-opt's extract_ir writes it (key order, indentation
// and a subdirectory in a module name included).
void writeMlCompilerOptCorpus(const fs::path& dir) {
  writeText(dir / "corpus_description.json", R"({
  "has_thinlto": false,
  "modules": [
    "lib/a.o",
    "b.o"
  ]
})");
  writeText(dir / "lib/a.o.bc", "BC\xC0\xDE-a");
  writeText(dir / "lib/a.o.cmd", kCommand);
  writeText(dir / "b.o.bc", "BC\xC0\xDE-bb");
  writeText(dir / "b.o.cmd", kCommand);
}

TEST(CorpusFormat, LoadsMlCompilerOptLayout) {
  ScratchDirectory dir;
  writeMlCompilerOptCorpus(dir.path());
  Expected<Corpus> corpus = Corpus::load(dir.path());
  ASSERT_TRUE(corpus) << corpus.error().message;
  ASSERT_EQ(corpus->size(), 2u);
  EXPECT_EQ(corpus->modules()[0].name, "lib/a.o");
  EXPECT_EQ(corpus->modules()[0].bitcode, dir / "lib/a.o.bc");
  EXPECT_EQ(corpus->modules()[0].bitcodeBytes, 6u);
  EXPECT_EQ(corpus->modules()[1].bitcodeBytes, 7u);
  std::vector<std::string> expected{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-Oz", "-emit-obj"};
  EXPECT_EQ(corpus->modules()[0].storedCommand, expected);
  EXPECT_FALSE(corpus->description().hasThinLTO);
  EXPECT_NE(corpus->find("b.o"), nullptr);
  EXPECT_EQ(corpus->find("c.o"), nullptr);
}

// A module's language from its stored -cc1 command: the main file's
// extension, else a C++ -std=, else other.
TEST(CorpusFormat, ModuleLanguageFromTheMainFileName) {
  auto language = [](std::vector<std::string> command) {
    ModuleSpec module;
    module.storedCommand = std::move(command);
    return moduleLanguage(module);
  };
  EXPECT_EQ(language({"-cc1", "-Oz", "-main-file-name", "inflate.c"}), SourceLanguage::C);
  for (const char* file : {"db.cc", "lexer.cpp", "a.cxx", "b.C", "c.c++"})
    EXPECT_EQ(language({"-cc1", "-main-file-name", file}), SourceLanguage::Cxx) << file;
  EXPECT_EQ(language({"-cc1", "-main-file-name", "gen.inc", "-std=gnu++17"}), SourceLanguage::Cxx);
  EXPECT_EQ(language({"-cc1", "-main-file-name", "kernel.cl"}), SourceLanguage::Other);
  EXPECT_EQ(language({"-cc1"}), SourceLanguage::Other);
  EXPECT_EQ(sourceLanguageName(SourceLanguage::Cxx), "C++");
}

TEST(CorpusFormat, DescriptionRoundTrips) {
  ScratchDirectory dir;
  CorpusDescription d;
  d.modules = {"x/y.o", "z.o"};
  d.hasThinLTO = true;
  d.globalCommandOverride = std::vector<std::string>{"-cc1", "-O2"};
  ASSERT_TRUE(writeCorpusDescription(dir / "corpus_description.json", d));
  Expected<CorpusDescription> back = readCorpusDescription(dir / "corpus_description.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->modules, d.modules);
  EXPECT_TRUE(back->hasThinLTO);
  EXPECT_EQ(back->globalCommandOverride, d.globalCommandOverride);
}

TEST(CorpusFormat, GlobalOverrideReplacesCommandFiles) {
  ScratchDirectory dir;
  writeText(
      dir / "corpus_description.json",
      R"({"has_thinlto": false, "modules": ["m"], "global_command_override": ["-cc1", "-Os"]})");
  writeText(dir / "m.bc", mlgo::testing::kBitcodeSignature);
  Expected<Corpus> corpus = Corpus::load(dir.path());
  ASSERT_TRUE(corpus) << corpus.error().message;
  EXPECT_EQ(corpus->modules()[0].storedCommand, (std::vector<std::string>{"-cc1", "-Os"}));
}

TEST(CorpusFormat, CommandFileSplitToleratesTrailingNul) {
  EXPECT_EQ(splitCommandFile(std::string("-cc1\0-Oz\0", 9)),
            (std::vector<std::string>{"-cc1", "-Oz"}));
  EXPECT_EQ(joinCommandFile({"-cc1", "-Oz"}), std::string("-cc1\0-Oz", 8));
}

// Each bad input is rejected with a message naming the file and the problem.
struct BadCorpusCase {
  const char* name;
  void (*damage)(const fs::path&);
  std::vector<std::string> messageParts;
};

class BadCorpus : public ::testing::TestWithParam<BadCorpusCase> {};

TEST_P(BadCorpus, IsRejectedWithANamedReason) {
  ScratchDirectory dir;
  writeMlCompilerOptCorpus(dir.path());
  GetParam().damage(dir.path());
  Expected<Corpus> corpus = Corpus::load(dir.path());
  ASSERT_FALSE(corpus);
  for (const std::string& part : GetParam().messageParts)
    EXPECT_NE(corpus.error().message.find(part), std::string::npos)
        << "message \"" << corpus.error().message << "\" lacks \"" << part << "\"";
}

INSTANTIATE_TEST_SUITE_P(
    CorpusFormat, BadCorpus,
    ::testing::Values(
        BadCorpusCase{"MissingBitcode",
                      [](const fs::path& d) { fs::remove(d / "b.o.bc"); },
                      {"b.o.bc", "missing", "\"b.o\""}},
        BadCorpusCase{"EmptyBitcode",
                      [](const fs::path& d) { writeText(d / "b.o.bc", ""); },
                      {"b.o.bc", "\"b.o\"", "is empty (0 bytes)"}},
        BadCorpusCase{"NotBitcode",
                      [](const fs::path& d) {
                        writeText(d / "b.o.bc", "\x7F"
                                                "ELF object");
                      },
                      {"b.o.bc", "\"b.o\"", "not LLVM bitcode"}},
        BadCorpusCase{"BitcodeIsADirectory",
                      [](const fs::path& d) {
                        fs::remove(d / "b.o.bc");
                        fs::create_directory(d / "b.o.bc");
                      },
                      {"b.o.bc", "is a directory, not a file"}},
        BadCorpusCase{"MissingCommand",
                      [](const fs::path& d) { fs::remove(d / "lib/a.o.cmd"); },
                      {"lib/a.o.cmd", "no such file", "\"lib/a.o\""}},
        BadCorpusCase{"UnreadableCommand",
                      [](const fs::path& d) {
                        fs::remove(d / "b.o.cmd");
                        fs::create_directory(d / "b.o.cmd");
                      },
                      {"b.o.cmd", "not a regular file"}},
        BadCorpusCase{"CommandWithItsOwnOutput",
                      [](const fs::path& d) {
                        writeText(d / "b.o.cmd", kCommand + std::string("\0-o\0elsewhere.o", 15));
                      },
                      {"b.o.cmd", "\"b.o\"", "has its own -o elsewhere.o"}},
        BadCorpusCase{"CommandWithoutCc1",
                      [](const fs::path& d) { writeText(d / "b.o.cmd", "-Oz"); },
                      {"b.o.cmd", "-cc1"}},
        BadCorpusCase{"InvalidJson",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json", R"({"modules": ["a", )");
                      },
                      {"corpus_description.json", "invalid JSON"}},
        BadCorpusCase{"ModuleListedTwice",
                      [](const fs::path& d) {
                        writeText(
                            d / "corpus_description.json",
                            R"({"has_thinlto": false, "modules": ["b.o", "lib/a.o", "b.o"]})");
                      },
                      {"corpus_description.json", "\"b.o\"", "listed twice"}},
        BadCorpusCase{"ModuleListedTwiceInAnotherSpelling",
                      [](const fs::path& d) {
                        writeText(
                            d / "corpus_description.json",
                            R"({"has_thinlto": false, "modules": ["b.o", "lib/a.o", "./b.o"]})");
                      },
                      {"corpus_description.json", "\"./b.o\" is listed twice (also as \"b.o\")"}},
        BadCorpusCase{"NoModules",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json",
                                  R"({"has_thinlto": false, "modules": []})");
                      },
                      {"corpus_description.json", "empty"}},
        BadCorpusCase{"ModulesNotStrings",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json", R"({"modules": ["b.o", 3]})");
                      },
                      {"corpus_description.json", "modules\"[1]"}},
        BadCorpusCase{"UnfilledOverride",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json",
                                  R"({"has_thinlto": false, "modules": ["b.o"],
                                      "global_command_override": ["<UNSPECIFIED>"]})");
                      },
                      {"global_command_override", "UNSPECIFIED"}},
        BadCorpusCase{"NameEscapesCorpus",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json",
                                  R"({"has_thinlto": false, "modules": ["../b.o"]})");
                      },
                      {"\"../b.o\"", "inside the corpus"}},
        BadCorpusCase{"MissingThinLTOIndex",
                      [](const fs::path& d) {
                        writeText(d / "corpus_description.json",
                                  R"({"has_thinlto": true, "modules": ["b.o"]})");
                      },
                      {"b.o.thinlto.bc", "missing"}},
        BadCorpusCase{"MissingDescription",
                      [](const fs::path& d) { fs::remove(d / "corpus_description.json"); },
                      {"corpus_description.json", "no such file"}}),
    [](const ::testing::TestParamInfo<BadCorpusCase>& info) { return info.param.name; });

TEST(CorpusFormat, MissingDirectoryIsNamed) {
  Expected<Corpus> corpus = Corpus::load("/nonexistent/corpus");
  ASSERT_FALSE(corpus);
  EXPECT_NE(corpus.error().message.find("/nonexistent/corpus"), std::string::npos);
}

} // namespace
} // namespace mlgo::corpus
