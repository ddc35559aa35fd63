// The launcher's reading of compiler command lines and its plan: which
// commands get the plugin, the LTO link flag, --best-of; where the policy
// comes from. No compiler runs here (tests/deploy/*.sh build real code).
#include "mlgo/deploy/Launcher.h"
#include "TestSupport.h"
#include "mlgo/deploy/BitcodeInputs.h"
#include "mlgo/deploy/Cc1Command.h"
#include "mlgo/deploy/CompilerCommand.h"
#include "mlgo/deploy/ElfText.h"
#include "mlgo/deploy/ResponseFiles.h"
#include "mlgo/evaluators/CompilerTask.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/policies/CompileReport.h"
#include "mlgo/policies/PolicyLocation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

namespace mlgo::deploy {
namespace {

using Arguments = std::vector<std::string>;

TEST(CompilerCommand, CompileOfOneSourceIsASingleNativeObject) {
  CompilerCommand c = parseCompilerCommand({"-Oz", "-I", "include", "-c", "src/a.c", "-o", "a.o"});
  EXPECT_EQ(c.sources, Arguments{"src/a.c"});
  EXPECT_EQ(c.output, "a.o");
  EXPECT_TRUE(c.optimisesSources());
  EXPECT_TRUE(c.singleNativeObject());
  EXPECT_FALSE(c.linksWithLto());
  EXPECT_EQ(c.objectPath(), "a.o");
  // Without -o, clang writes the source's stem + .o in the working directory.
  EXPECT_EQ(parseCompilerCommand({"-c", "dir/b.cpp"}).objectPath(), "b.o");
}

TEST(CompilerCommand, OptionValuesAreNotSources) {
  CompilerCommand c = parseCompilerCommand(
      {"-include", "config.h", "-MF", "x.c", "-Xclang", "foo.c", "-x", "c", "weird.src", "-c"});
  EXPECT_EQ(c.sources, Arguments{"weird.src"}); // -x c makes it C
}

TEST(CompilerCommand, EverySourceKindClangOptimises) {
  for (const char* source : {"m.cppm", "k.cu", "h.hip", "o.mm", "p.ii", "q.ll", "r.bc"})
    EXPECT_EQ(parseCompilerCommand({"-c", source}).sources, Arguments{source}) << source;
  EXPECT_EQ(parseCompilerCommand({"lib.a", "x.so", "y.o"}).sources, Arguments{});
}

// C++ units' other compiles under --mlgo-best-of start from their bitcode.
TEST(CompilerCommand, CxxSourcesByExtensionOrLanguage) {
  for (const char* source : {"a.cc", "a.cpp", "a.cxx", "a.C", "a.cppm", "a.ii", "a.mm", "a.cu"})
    EXPECT_TRUE(parseCompilerCommand({"-c", source}).cxxSource) << source;
  for (const char* source : {"a.c", "a.i", "a.m", "a.ll", "a.bc"})
    EXPECT_FALSE(parseCompilerCommand({"-c", source}).cxxSource) << source;
  EXPECT_TRUE(parseCompilerCommand({"-x", "c++", "-c", "a.c"}).cxxSource);
  EXPECT_TRUE(parseCompilerCommand({"-x", "c++", "-c", "-"}).cxxSource);
  EXPECT_FALSE(parseCompilerCommand({"-x", "c", "-c", "a.cc"}).cxxSource);
  EXPECT_FALSE(parseCompilerCommand({"-c", "a.c", "-include", "b.cc"}).cxxSource);
}

TEST(CompilerCommand, NothingToOptimise) {
  EXPECT_FALSE(parseCompilerCommand({"--version"}).optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"a.o", "b.o", "-o", "prog"}).optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"-E", "a.c"}).optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"-fsyntax-only", "a.c"}).optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"-c", "start.S"}).optimisesSources());
  EXPECT_FALSE(
      parseCompilerCommand({"-x", "assembler-with-cpp", "-c", "start.s"}).optimisesSources());
}

TEST(CompilerCommand, OnlyObjectsOfOneSourceCanBeCompared) {
  EXPECT_FALSE(parseCompilerCommand({"-S", "a.c"}).singleNativeObject());
  EXPECT_FALSE(parseCompilerCommand({"-c", "-flto=thin", "a.c"}).singleNativeObject());
  EXPECT_FALSE(parseCompilerCommand({"-c", "-gsplit-dwarf", "a.c"}).singleNativeObject());
  EXPECT_FALSE(parseCompilerCommand({"-c", "a.c", "b.c"}).singleNativeObject());
  EXPECT_TRUE(parseCompilerCommand({"-c", "-flto", "-fno-lto", "a.c"}).singleNativeObject());
}

TEST(CompilerCommand, LtoLinks) {
  CompilerCommand link = parseCompilerCommand({"-flto=thin", "-fuse-ld=lld", "a.o", "-o", "p"});
  EXPECT_TRUE(link.linksWithLto());
  EXPECT_TRUE(link.usesLld);
  EXPECT_FALSE(link.optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"-flto", "-c", "a.c"}).linksWithLto());
  EXPECT_FALSE(parseCompilerCommand({"-fuse-ld=bfd", "a.o"}).usesLld);
}

TEST(CompilerCommand, SecondCompileWritesOnlyItsObject) {
  Arguments arguments{"-Oz",         "-MD", "-MF", "a.d",          "-MT",  "a.o",
                      "-c",          "a.c", "-o",  "a.o",          "-MMD", "-MP",
                      "-Wp,-MD,x.d", "-MQ", "q",   "-ftime-trace", "-DX=1"};
  EXPECT_EQ(withOnlyObjectOutput(arguments, "tmp.o"),
            (Arguments{"-Oz", "-c", "a.c", "-DX=1", "-o", "tmp.o"}));
}

TEST(CompilerCommand, StandardInputIsASourceWithALanguage) {
  CompilerCommand c = parseCompilerCommand({"-Oz", "-x", "c", "-c", "-", "-o", "s.o"});
  EXPECT_EQ(c.sources, Arguments{"-"});
  EXPECT_TRUE(c.readsStandardInput());
  EXPECT_TRUE(c.singleNativeObject());
  // Without -x clang refuses standard input itself.
  EXPECT_FALSE(parseCompilerCommand({"-c", "-"}).optimisesSources());
  EXPECT_FALSE(parseCompilerCommand({"-x", "assembler", "-c", "-"}).optimisesSources());
  // clang names the object of a source from standard input "-.o".
  EXPECT_EQ(parseCompilerCommand({"-x", "c", "-c", "-"}).objectPath(), "-.o");
}

TEST(CompilerCommand, LinkInputsAndLibraries) {
  CompilerCommand c = parseCompilerCommand(
      {"main.o", "libx.a", "-L", "lib", "-Lother", "-lz", "-l", "m", "-o", "p"});
  EXPECT_EQ(c.linkInputs, (Arguments{"main.o", "libx.a"}));
  EXPECT_EQ(c.libraries, (Arguments{"z", "m"}));
  EXPECT_EQ(c.libraryDirectories, (Arguments{"lib", "other"}));
  EXPECT_TRUE(c.links());
  EXPECT_FALSE(parseCompilerCommand({"-c", "a.c"}).links());
}

TEST(CompilerCommand, UnclassifiableCommandsSayWhy) {
  EXPECT_NE(parseCompilerCommand({"-cc1", "-emit-obj", "a.c"}).unclassified.find("-cc1"),
            std::string::npos);
  EXPECT_NE(parseCompilerCommand({"--driver-mode=cl", "/c", "a.c"}).unclassified.find("cl"),
            std::string::npos);
  EXPECT_NE(parseCompilerCommand({"-x", "fortran", "-c", "a.f"}).unclassified.find("fortran"),
            std::string::npos);
  EXPECT_EQ(parseCompilerCommand({"--driver-mode=g++", "-x", "c++", "-c", "a.cc"}).unclassified,
            "");
}

TEST(CompilerCommand, BestOfSaysWhyItCannotCompare) {
  EXPECT_EQ(parseCompilerCommand({"-c", "a.c"}).whyNotSingleNativeObject(), "");
  EXPECT_EQ(parseCompilerCommand({"-c", "a.c", "b.c"}).whyNotSingleNativeObject(),
            "2 sources in one command");
  EXPECT_NE(parseCompilerCommand({"-S", "a.c"}).whyNotSingleNativeObject().find("-S"),
            std::string::npos);
  // -save-temps is compared (the saved files follow the kept object).
  EXPECT_TRUE(parseCompilerCommand({"-c", "-save-temps", "a.c"}).singleNativeObject());
  EXPECT_TRUE(parseCompilerCommand({"-c", "-save-temps=obj", "a.c"}).saveTemps);
}

TEST(CompilerCommand, TheSecondCompileSavesNoTemporaries) {
  EXPECT_EQ(withOnlyObjectOutput({"-save-temps", "-save-temps=obj", "-c", "a.c"}, "t.o"),
            (Arguments{"-c", "a.c", "-o", "t.o"}));
}

// What clang-22's driver makes of the same text (checked with clang -###).
TEST(ResponseFiles, SplitAsClangsDriverDoes) {
  EXPECT_EQ(splitGnuArguments("\"-DQ=a b\" -DR=\\\"x\\\" '-DS=c\\d' \"\" -DT\n"),
            (Arguments{"-DQ=a b", "-DR=\"x\"", "-DS=cd", "-DT"}));
  EXPECT_EQ(splitGnuArguments("  -c\ta.c\r\n-o  x.o"), (Arguments{"-c", "a.c", "-o", "x.o"}));
  for (const std::string& a : {std::string("plain"), std::string("with space"),
                               std::string("q'u\"o\\te"), std::string("new\nline")})
    EXPECT_EQ(splitGnuArguments(quoteGnuArgument(a) + " next"), (Arguments{a, "next"})) << a;
}

TEST(ResponseFiles, ExpandedRecursivelyFromTheWorkingDirectory) {
  mlgo::testing::ScratchDirectory scratch;
  std::filesystem::create_directories(scratch / "sub");
  std::string inner = (scratch / "inner.rsp").string();
  std::ofstream(scratch / "sub" / "outer.rsp") << "-DA=1 @" << inner << " 'x y.c'";
  std::ofstream(inner) << "-c\n-o out.o\n";
  Expected<Arguments> expanded =
      expandResponseFiles({"-Oz", "@" + (scratch / "sub" / "outer.rsp").string(), "@missing"});
  ASSERT_TRUE(expanded) << expanded.error().message;
  // A response file that does not exist stays an argument, as in clang.
  EXPECT_EQ(*expanded, (Arguments{"-Oz", "-DA=1", "-c", "-o", "out.o", "x y.c", "@missing"}));
  EXPECT_TRUE(usesResponseFiles({"@" + inner}));
  EXPECT_FALSE(usesResponseFiles({"@missing", "-c"}));
  std::ofstream(scratch / "loop.rsp") << "-c @" << (scratch / "loop.rsp").string();
  Expected<Arguments> loop = expandResponseFiles({"@" + (scratch / "loop.rsp").string()});
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message.find("includes itself"), std::string::npos);
}

// Archives written byte by byte: "!<arch>\n", 60-byte member headers.
std::string archiveMember(const std::string& name, const std::string& data) {
  char header[61];
  std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0",
                "0", "644", data.size());
  return std::string(header, 60) + data + (data.size() % 2 ? "\n" : "");
}

TEST(BitcodeInputs, ObjectsArchivesAndLibrariesHoldingBitcode) {
  mlgo::testing::ScratchDirectory scratch;
  const std::string bitcode("BC\xC0\xDE rest", 9), wrapped("\xDE\xC0\x17\x0B rest", 9);
  std::ofstream(scratch / "native.o") << "\x7F"
                                      << "ELF native";
  std::ofstream(scratch / "lto.o") << bitcode;
  std::ofstream(scratch / "wrapped.o") << wrapped;
  std::ofstream(scratch / "libnative.a") << "!<arch>\n"
                                         << archiveMember("/", "symtab")
                                         << archiveMember("n.o/", "\x7F"
                                                                  "ELF");
  std::ofstream(scratch / "libmixed.a") << "!<arch>\n"
                                        << archiveMember("n.o/", "\x7F"
                                                                 "ELF.")
                                        << archiveMember("b.o/", bitcode);
  std::ofstream(scratch / "libthin.a")
      << "!<thin>\n"
      << archiveMember("//", "lto.o/\n") << archiveMember("/0", "");
  EXPECT_TRUE(isBitcodeFile(scratch / "lto.o"));
  EXPECT_TRUE(isBitcodeFile(scratch / "wrapped.o"));
  EXPECT_FALSE(isBitcodeFile(scratch / "native.o"));
  auto first = [&](const Arguments& arguments) {
    std::optional<std::string> found = firstBitcodeInput(parseCompilerCommand(arguments));
    return found ? *found : std::string("none");
  };
  std::string dir = scratch.path().string();
  EXPECT_EQ(first({dir + "/native.o", dir + "/libnative.a", "-o", "p"}), "none");
  EXPECT_EQ(first({dir + "/native.o", dir + "/lto.o"}), dir + "/lto.o");
  EXPECT_EQ(first({dir + "/libmixed.a"}), dir + "/libmixed.a(b.o)");
  EXPECT_EQ(first({dir + "/libthin.a"}), dir + "/libthin.a(" + dir + "/lto.o)");
  EXPECT_EQ(first({"-L", dir, "-lnative", "-lmixed"}), dir + "/libmixed.a(b.o)");
  EXPECT_EQ(first({"-lmixed"}), "none"); // not in any -L directory
}

// Plans with a fake environment; the compiler is real clang-22 (the plan
// checks it is the LLVM the plugin is built for) but is not run.
class LauncherPlan : public ::testing::Test {
protected:
  void SetUp() override {
    std::ofstream(scratch_ / "policy.json") << "{}";
    environment_["MLGO_POLICY"] = (scratch_ / "policy.json").string();
    environment_["MLGO_INLINER_PLUGIN"] = (scratch_ / "policy.json").string(); // any file
  }
  Expected<LaunchPlan> plan(const Arguments& arguments, const std::string& program = "mlgo-cc",
                            const std::string& parent = "/bin/bash") {
    return planLaunch(
        program, "/nonexistent/mlgo-cc", arguments,
        [this](const char* name) {
          auto found = environment_.find(name);
          return found == environment_.end() ? nullptr : found->second.c_str();
        },
        parent);
  }
  bool hasPlugin(const LaunchPlan& p) const {
    return std::find(p.arguments.begin(), p.arguments.end(),
                     "-fpass-plugin=" + environment_.at("MLGO_INLINER_PLUGIN")) !=
           p.arguments.end();
  }
  mlgo::testing::ScratchDirectory scratch_;
  std::map<std::string, std::string> environment_;
};

TEST_F(LauncherPlan, CompilerModeAddsThePluginAndKeepsEverythingElse) {
  Expected<LaunchPlan> p = plan({"-Oz", "-c", "a.c", "-o", "a.o"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->compiler, std::string(MLGO_LLVM_TOOLS_DIR) + "/clang");
  ASSERT_EQ(p->arguments.size(), 6u);
  EXPECT_EQ(p->arguments.back(), "-fpass-plugin=" + environment_["MLGO_INLINER_PLUGIN"]);
  EXPECT_EQ(p->policyFile, environment_["MLGO_POLICY"]);
  EXPECT_FALSE(p->bestOf);
  Expected<LaunchPlan> cxx = plan({"-c", "a.cpp"}, "/usr/local/bin/mlgo-c++");
  ASSERT_TRUE(cxx) << cxx.error().message;
  EXPECT_EQ(cxx->compiler, std::string(MLGO_LLVM_TOOLS_DIR) + "/clang++");
}

TEST_F(LauncherPlan, LauncherModeTakesTheCompilerFromTheFront) {
  std::string clang = std::string(MLGO_LLVM_TOOLS_DIR) + "/clang";
  Expected<LaunchPlan> p =
      plan({"--mlgo-best-of", clang, "-Oz", "-c", "a.c", "-o", "a.o", "--mlgo-verbose"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->compiler, clang);
  EXPECT_EQ(p->userArguments, (Arguments{"-Oz", "-c", "a.c", "-o", "a.o"}));
  EXPECT_TRUE(p->bestOf);
  EXPECT_TRUE(p->options.verbose);
}

TEST_F(LauncherPlan, LinksAndQueriesPassThroughWithoutAPolicy) {
  environment_.erase("MLGO_POLICY");
  for (const Arguments& arguments :
       {Arguments{"--version"}, Arguments{"a.o", "-o", "p"}, Arguments{"-E", "a.c"}}) {
    Expected<LaunchPlan> p = plan(arguments);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(p->arguments, arguments);
    EXPECT_FALSE(p->policyFile);
  }
}

TEST_F(LauncherPlan, LtoLinkLoadsThePluginIntoLld) {
  Expected<LaunchPlan> p = plan({"-flto=thin", "-fuse-ld=lld", "a.o", "-o", "p"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->arguments.back(), "-Wl,--load-pass-plugin=" + environment_["MLGO_INLINER_PLUGIN"]);
  Expected<LaunchPlan> bfd = plan({"-flto", "a.o", "-o", "p"});
  ASSERT_FALSE(bfd);
  EXPECT_NE(bfd.error().message.find("-fuse-ld=lld"), std::string::npos);
}

TEST_F(LauncherPlan, ErrorsNameTheCause) {
  environment_.erase("MLGO_POLICY");
  Expected<LaunchPlan> none = plan({"-c", "a.c"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no policy: set MLGO_POLICY"), std::string::npos);
  Expected<LaunchPlan> gcc = plan({"gcc", "-c", "a.c"});
  ASSERT_FALSE(gcc);
  EXPECT_NE(gcc.error().message.find("is not clang 22"), std::string::npos);
  Expected<LaunchPlan> typo = plan({"--mlgo-bestof", "-c", "a.c"});
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("--mlgo-bestof"), std::string::npos);
  environment_["MLGO_INLINER_PLUGIN"] = "/nonexistent/libmlgo-inliner.so";
  Expected<LaunchPlan> plugin =
      plan({"--mlgo-policy=" + (scratch_ / "policy.json").string(), "-c", "a.c"});
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().message.find("/nonexistent/libmlgo-inliner.so"), std::string::npos);
}

TEST_F(LauncherPlan, AShippedPolicyIsTakenByName) {
  Expected<LaunchPlan> p = plan({"--mlgo-policy=inlining-size-v0", "-c", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_TRUE(p->policyFile);
  EXPECT_EQ(*p->policyFile,
            (policies::shippedPolicyDirectory() / "inlining-size-v0.json").string());
  EXPECT_TRUE(std::filesystem::is_regular_file(*p->policyFile));
  Expected<LaunchPlan> typo = plan({"--mlgo-policy=inlining-size-v9", "-c", "a.c"});
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("no shipped policy \"inlining-size-v9\""), std::string::npos)
      << typo.error().message;
  EXPECT_NE(typo.error().message.find("inlining-size-v0"), std::string::npos)
      << typo.error().message;
  EXPECT_FALSE(policies::isPolicyName("./inlining-size-v0"));
  EXPECT_FALSE(policies::isPolicyName("p.json"));
}

TEST_F(LauncherPlan, ResponseFilesAreReadToFindTheSources) {
  std::ofstream(scratch_ / "args.rsp") << "-Oz -c a.c -o r.o";
  std::string rsp = "@" + (scratch_ / "args.rsp").string();
  Expected<LaunchPlan> p = plan({rsp});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(hasPlugin(*p));
  EXPECT_EQ(p->arguments.front(), rsp); // clang reads the file itself
  EXPECT_EQ(p->command.sources, Arguments{"a.c"});
  EXPECT_EQ(p->command.objectPath(), "r.o");
}

TEST_F(LauncherPlan, StandardInputGetsThePolicy) {
  Expected<LaunchPlan> p = plan({"--mlgo-best-of", "-Oz", "-x", "c", "-c", "-", "-o", "s.o"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(hasPlugin(*p));
  EXPECT_TRUE(p->bestOf);
}

TEST_F(LauncherPlan, UnclassifiableCommandsFailUnlessPassedThrough) {
  Expected<LaunchPlan> refused = plan({"-cc1", "-emit-obj", "a.c"});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--mlgo-passthrough"), std::string::npos);
  Expected<LaunchPlan> p = plan({"--mlgo-passthrough", "-cc1", "-emit-obj", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->arguments, (Arguments{"-cc1", "-emit-obj", "a.c"}));
  EXPECT_FALSE(p->policyFile);
}

TEST_F(LauncherPlan, BitcodeInputsMakeALinkAnLtoLink) {
  std::ofstream(scratch_ / "lto.o") << std::string("BC\xC0\xDE", 4);
  std::string object = (scratch_ / "lto.o").string();
  Expected<LaunchPlan> p = plan({"-fuse-ld=lld", object, "-o", "p"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->arguments.back(), "-Wl,--load-pass-plugin=" + environment_["MLGO_INLINER_PLUGIN"]);
  Expected<LaunchPlan> bfd = plan({object, "-o", "p"});
  ASSERT_FALSE(bfd);
  EXPECT_NE(bfd.error().message.find(object + " is LLVM bitcode"), std::string::npos)
      << bfd.error().message;
}

TEST_F(LauncherPlan, EnvironmentSwitchesAcceptOnlyTheirValues) {
  environment_["MLGO_BEST_OF"] = "yes";
  Expected<LaunchPlan> bestOf = plan({"-c", "a.c"});
  ASSERT_FALSE(bestOf);
  EXPECT_NE(bestOf.error().message.find("MLGO_BEST_OF=yes: expected 1 (on) or 0 (off)"),
            std::string::npos);
  environment_["MLGO_BEST_OF"] = "0";
  environment_["MLGO_POLICY_FALLBACK"] = "yes";
  Expected<LaunchPlan> fallback = plan({"-c", "a.c"});
  ASSERT_FALSE(fallback);
  EXPECT_NE(fallback.error().message.find("MLGO_POLICY_FALLBACK=yes"), std::string::npos);
  environment_["MLGO_POLICY_FALLBACK"] = "heuristic";
  EXPECT_TRUE(plan({"-c", "a.c"}));
}

TEST_F(LauncherPlan, APolicyPathThatIsADirectoryIsCalledOne) {
  environment_["MLGO_POLICY"] = scratch_.path().string();
  Expected<LaunchPlan> p = plan({"-c", "a.c"});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("is a directory, not a policy file"), std::string::npos)
      << p.error().message;
  Expected<LaunchPlan> flag = plan({"--mlgo-policy=" + scratch_.path().string(), "-c", "a.c"});
  ASSERT_FALSE(flag);
  EXPECT_NE(flag.error().message.find("is a directory, not a policy file"), std::string::npos)
      << flag.error().message;
}

TEST_F(LauncherPlan, BestOfThatCannotApplySaysSo) {
  Expected<LaunchPlan> p = plan({"--mlgo-best-of", "-c", "a.c", "b.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_FALSE(p->bestOf);
  ASSERT_EQ(p->warnings.size(), 1u);
  EXPECT_NE(p->warnings[0].find("2 sources"), std::string::npos);
}

// The verify flag checks best-of's skips: alone it has nothing to check.
TEST_F(LauncherPlan, BestOfVerifyNeedsBestOf) {
  Expected<LaunchPlan> alone = plan({"--mlgo-best-of-verify", "-Oz", "-c", "a.c"});
  ASSERT_FALSE(alone);
  EXPECT_NE(alone.error().message.find("give --mlgo-best-of with it"), std::string::npos);
  environment_["MLGO_BEST_OF_VERIFY"] = "1";
  Expected<LaunchPlan> p = plan({"--mlgo-best-of", "-Oz", "-c", "a.c", "-o", "a.o"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->bestOf);
  EXPECT_TRUE(p->options.bestOfVerify);
}

// Only a report of nothing but "plain" lines proves a compile of clang's own:
// no report, a partial line, or any change is no proof.
TEST(CompileReport, OnlyPlainLinesProveAPlainCompile) {
  using policies::reportShowsPlainCompile;
  EXPECT_TRUE(reportShowsPlainCompile("plain\n"));
  EXPECT_TRUE(reportShowsPlainCompile("plain"));
  EXPECT_TRUE(reportShowsPlainCompile("plain\nplain\n"));
  for (const char* report : {"", "\n", "pla", "plainly\n", "changed: inliner overruled\n",
                             "plain\nchanged: pipeline -Oz -GVNPass\n", "plain\n\n"})
    EXPECT_FALSE(reportShowsPlainCompile(report)) << '"' << report << '"';
}

TEST_F(LauncherPlan, BestOfSetNeedsAPipelinePolicyAndOneObject) {
  Expected<LaunchPlan> none = plan({"--mlgo-best-of-set", "-c", "a.c"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("give one with --mlgo-pipeline-policy"), std::string::npos);
  environment_["MLGO_PIPELINE_POLICY"] = (scratch_ / "policy.json").string();
  Expected<LaunchPlan> both = plan({"--mlgo-best-of-set", "--mlgo-best-of", "-c", "a.c"});
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("give one"), std::string::npos);
  environment_["MLGO_BEST_OF_SET"] = "1";
  Expected<LaunchPlan> p = plan({"-Oz", "-c", "a.c", "-o", "a.o"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->bestOfSet);
  EXPECT_FALSE(p->bestOf);
  Expected<LaunchPlan> two = plan({"-c", "a.c", "b.c"});
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_FALSE(two->bestOfSet);
  ASSERT_EQ(two->warnings.size(), 1u);
  EXPECT_NE(two->warnings[0].find("--mlgo-best-of-set compares one object"), std::string::npos);
  environment_["MLGO_EVICTION_POLICY"] = (scratch_ / "policy.json").string();
  Expected<LaunchPlan> eviction = plan({"-c", "a.c"});
  ASSERT_FALSE(eviction);
  EXPECT_NE(eviction.error().message.find("cannot be combined with --mlgo-best-of-set"),
            std::string::npos);
}

// The register allocator's advisors are answered on clang's channels by
// mlgo-channel-cc: eviction and priority policies alike (each task's
// launcher variable), from the environment or a flag, one per compile.
TEST_F(LauncherPlan, ChannelPoliciesRunUnderTheChannelProgramOnePerCompile) {
  environment_.erase("MLGO_POLICY");
  environment_["MLGO_CHANNEL_CC"] = (scratch_ / "policy.json").string(); // any file
  environment_["MLGO_PRIORITY_POLICY"] = (scratch_ / "policy.json").string();
  Expected<LaunchPlan> priority = plan({"-O2", "-c", "a.c"});
  ASSERT_TRUE(priority) << priority.error().message;
  ASSERT_TRUE(priority->options.channelPolicy);
  EXPECT_EQ(priority->options.channelPolicy->variable, "MLGO_PRIORITY_POLICY");
  EXPECT_TRUE(priority->channelPolicyFile);
  EXPECT_EQ(priority->channelProgram, environment_.at("MLGO_CHANNEL_CC"));
  EXPECT_FALSE(hasPlugin(*priority)); // no inliner policy: no plugin
  // The flag of the same channel replaces the variable's policy.
  std::ofstream(scratch_ / "other.json") << "{}";
  Expected<LaunchPlan> flag =
      plan({"--mlgo-priority-policy=" + (scratch_ / "other.json").string(), "-c", "a.c"});
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ(flag->options.channelPolicy->policy, (scratch_ / "other.json").string());
  // Two channels: refused, naming both.
  Expected<LaunchPlan> both =
      plan({"--mlgo-eviction-policy=" + (scratch_ / "other.json").string(), "-c", "a.c"});
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("--mlgo-eviction-policy and --mlgo-priority-policy"),
            std::string::npos)
      << both.error().message;
  // Every channel deployment is a registered task's launcher variable.
  for (const ChannelDeployment& channel : channelDeployments())
    EXPECT_TRUE(evaluators::CompilerTask::deployedThrough(channel.variable)) << channel.variable;
}

TEST_F(LauncherPlan, SearchBudgetsFromFlagsAndTheEnvironment) {
  Expected<LaunchPlan> p = plan({"--mlgo-search", "-c", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(p->search);
  EXPECT_EQ(p->options.search, kDefaultSearchBudget);
  EXPECT_FALSE(p->bestOf);
  EXPECT_EQ(p->plugin, environment_.at("MLGO_INLINER_PLUGIN"));
  p = plan({"--mlgo-search=4", "--mlgo-search-verify", "-c", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->options.search, 4u);
  EXPECT_TRUE(p->options.searchVerify);
  environment_["MLGO_SEARCH"] = "8";
  p = plan({"-c", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->options.search, 8u);
  environment_["MLGO_SEARCH"] = "0"; // off
  p = plan({"-c", "a.c"});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_FALSE(p->search);
  for (const char* bad : {"lots", "-1", ""}) {
    environment_.erase("MLGO_SEARCH");
    Expected<LaunchPlan> refused = plan({std::string("--mlgo-search=") + bad, "-c", "a.c"});
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("--mlgo-search="), std::string::npos);
  }
  environment_["MLGO_SEARCH"] = "yes";
  Expected<LaunchPlan> refused = plan({"-c", "a.c"});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("MLGO_SEARCH=yes"), std::string::npos);
}

TEST_F(LauncherPlan, SearchThatCannotApplySaysSoAndUsesThePolicy) {
  for (const Arguments& arguments :
       {Arguments{"--mlgo-search", "-S", "a.c"}, Arguments{"--mlgo-search", "-c", "a.c", "b.c"},
        Arguments{"--mlgo-search", "-c", "a.c", "-save-temps"},
        Arguments{"--mlgo-search", "--mlgo-ccache", "-c", "a.c"}}) {
    Expected<LaunchPlan> p = plan(arguments);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_FALSE(p->search) << arguments.back();
    ASSERT_EQ(p->warnings.size(), 1u) << arguments.back();
    EXPECT_NE(p->warnings[0].find("--mlgo-search"), std::string::npos);
    EXPECT_TRUE(hasPlugin(*p));
  }
  // A link has nothing to search, and nothing to warn about.
  Expected<LaunchPlan> link = plan({"--mlgo-search", "a.o", "-o", "prog"});
  ASSERT_TRUE(link) << link.error().message;
  EXPECT_FALSE(link->search);
  EXPECT_TRUE(link->warnings.empty());
}

TEST_F(LauncherPlan, CacheCommandsNeedNoCompiler) {
  for (const char* flag : {"--mlgo-cache-stats", "--mlgo-cache-clear"}) {
    Expected<LaunchPlan> p = plan({flag});
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_TRUE(p->options.cacheStats || p->options.cacheClear);
  }
}

TEST(Cc1Command, DriverJobsAreReadAsTheDriverQuotesThem) {
  std::vector<std::vector<std::string>> jobs =
      parseDriverJobs("clang version 22\nTarget: x86_64-pc-linux-gnu\n (in-process)\n"
                      " \"/usr/bin/clang\" \"-cc1\" \"-D\" \"Q=\\\"x y\\\"\" \"-o\" \"a.o\"\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0], (Arguments{"/usr/bin/clang", "-cc1", "-D", "Q=\"x y\"", "-o", "a.o"}));
}

TEST(Cc1Command, OneFrontendJobSplitIntoFrontendAndBackend) {
  mlgo::testing::ScratchDirectory scratch;
  std::ofstream(scratch / "a.c") << "int f(int x) { return x + 1; }\n";
  const std::string clang = std::string(MLGO_LLVM_TOOLS_DIR) + "/clang";
  Expected<Cc1Command> cc1 = cc1CommandFor(
      clang, {"-Oz", "-MD", "-MF", (scratch / "a.d").string(), "-Xclang", "-fembed-bitcode=all",
              "-c", (scratch / "a.c").string(), "-o", (scratch / "a.o").string()});
  ASSERT_TRUE(cc1) << cc1.error().message;
  EXPECT_EQ(cc1->arguments.front(), "-cc1");
  EXPECT_EQ(cc1->language, "c");
  EXPECT_EQ(cc1->input, (scratch / "a.c").string());
  EXPECT_EQ(cc1->output, (scratch / "a.o").string());
  auto has = [](const Arguments& list, const std::string& a) {
    return std::find(list.begin(), list.end(), a) != list.end();
  };
  EXPECT_TRUE(has(cc1->arguments, "-dependency-file"));
  for (const Arguments& derived : {cc1->corpusArguments(), cc1->backend("m.bc", "m.o")}) {
    EXPECT_FALSE(has(derived, "-dependency-file"));
    EXPECT_FALSE(has(derived, "-fembed-bitcode=all"));
    EXPECT_FALSE(has(derived, (scratch / "a.c").string()));
  }
  Arguments backend = cc1->backend("m.bc", "m.o");
  EXPECT_EQ(Arguments(backend.end() - 5, backend.end()),
            (Arguments{"-o", "m.o", "-x", "ir", "m.bc"}));
  // Not one frontend job: refused with the reason.
  Expected<Cc1Command> assembly = cc1CommandFor(clang, {"-S", (scratch / "a.c").string()});
  ASSERT_FALSE(assembly);
  EXPECT_NE(assembly.error().message.find("object"), std::string::npos);
  Expected<Cc1Command> link = cc1CommandFor(clang, {(scratch / "a.c").string(), "-o", "prog"});
  ASSERT_FALSE(link);
  EXPECT_NE(link.error().message.find("jobs"), std::string::npos);
}

TEST_F(LauncherPlan, CcacheBehindTheLauncherHashesThePolicy) {
  std::string clang = std::string(MLGO_LLVM_TOOLS_DIR) + "/clang";
  for (const Arguments& arguments :
       {Arguments{"--mlgo-ccache", "-c", "a.c"}, Arguments{"ccache", clang, "-c", "a.c"}}) {
    Expected<LaunchPlan> p = plan(arguments);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_TRUE(p->options.ccache);
    EXPECT_EQ(p->command.sources, Arguments{"a.c"}); // ccache is not an input
    auto extra = std::find_if(p->environment.begin(), p->environment.end(),
                              [](const auto& e) { return e.first == "CCACHE_EXTRAFILES"; });
    ASSERT_NE(extra, p->environment.end());
    EXPECT_EQ(extra->second,
              environment_["MLGO_POLICY"] + ":" + environment_["MLGO_INLINER_PLUGIN"]);
  }
}

TEST_F(LauncherPlan, CcacheInFrontOfTheLauncherMustHashThePolicy) {
  Expected<LaunchPlan> refused = plan({"-c", "a.c"}, "mlgo-cc", "/usr/bin/ccache");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("--mlgo-ccache"), std::string::npos);
  // Nothing to optimise (ccache's own -E run): no policy, nothing to hash.
  EXPECT_TRUE(plan({"-E", "a.c"}, "mlgo-cc", "/usr/bin/ccache"));
  environment_["CCACHE_EXTRAFILES"] =
      environment_["MLGO_POLICY"] + ":" + environment_["MLGO_INLINER_PLUGIN"];
  Expected<LaunchPlan> hashed = plan({"-c", "a.c"}, "mlgo-cc", "/usr/bin/ccache");
  EXPECT_TRUE(hashed) << hashed.error().message;
}

TEST(PolicyLocation, EnvironmentFirstThenTheNearestFileUpwards) {
  mlgo::testing::ScratchDirectory scratch;
  std::filesystem::create_directories(scratch / "a/b/c");
  std::ofstream(scratch / "a" / "mlgo-policy.json") << "{}";
  std::ofstream(scratch / "explicit.json") << "{}";
  Expected<std::filesystem::path> found = policies::locatePolicyFile(nullptr, scratch / "a/b/c");
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, scratch / "a" / "mlgo-policy.json");
  Expected<std::filesystem::path> given =
      policies::locatePolicyFile((scratch / "explicit.json").c_str(), scratch / "a/b/c");
  ASSERT_TRUE(given);
  EXPECT_EQ(*given, scratch / "explicit.json");
  EXPECT_FALSE(policies::locatePolicyFile((scratch / "missing.json").c_str(), scratch / "a"));
  Expected<std::filesystem::path> none = policies::locatePolicyFile("", scratch.path());
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find(scratch.path().string()), std::string::npos);
  // A shipped policy's name, as --mlgo-policy takes it; an unknown name says
  // which variable held it.
  Expected<std::filesystem::path> named = policies::locatePolicyFile("inlining-oz", scratch / "a");
  ASSERT_TRUE(named) << named.error().message;
  EXPECT_EQ(*named, *policies::shippedPolicy("inlining-oz"));
  Expected<std::filesystem::path> unknown =
      policies::locatePolicyFile("no-such-policy", scratch / "a");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("MLGO_POLICY=no-such-policy"), std::string::npos);
}

// The launcher's ELF reader and the evaluator's LLVM-based measure agree,
// with and without -ffunction-sections.
TEST(ElfText, AgreesWithTheEvaluatorsMeasure) {
  mlgo::testing::ScratchDirectory scratch;
  std::ofstream(scratch / "a.c")
      << "static int g(int x) { return x * 3; }\n"
         "int f(int x) { return g(x) + 1; }\n"
         "int h(int *p) { for (int i = 0; i < 9; ++i) p[i] += i; return *p; }\n";
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"-Oz"}, std::vector<std::string>{"-O2", "-ffunction-sections"}}) {
    std::vector<std::string> arguments = flags;
    for (const char* a : {"-c", "-o"})
      arguments.push_back(a);
    arguments.push_back((scratch / "a.o").string());
    arguments.push_back((scratch / "a.c").string());
    ASSERT_EQ(mlgo::testing::runProgram(mlgo::testing::clangPath(), arguments), 0);
    Expected<uint64_t> ours = textBytes(scratch / "a.o");
    Expected<evaluators::CodeMeasure> theirs =
        evaluators::measureCode(scratch / "a.o", {".text", ".text."});
    ASSERT_TRUE(ours) << ours.error().message;
    ASSERT_TRUE(theirs) << theirs.error().message;
    EXPECT_GT(*ours, 0u);
    EXPECT_EQ(*ours, theirs->bytes) << flags.back();
  }
  std::ofstream(scratch / "not-elf.o") << "hello";
  Expected<uint64_t> bad = textBytes(scratch / "not-elf.o");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not-elf.o"), std::string::npos);
  EXPECT_FALSE(textContents(scratch / "not-elf.o"));
}

// The code itself: as many bytes as textBytes counts, the same for the same
// code, different for other code.
TEST(ElfText, ContentsAreTheCode) {
  mlgo::testing::ScratchDirectory scratch;
  std::ofstream(scratch / "a.c") << "int f(int x) { return x * 3 + 1; }\n";
  std::ofstream(scratch / "b.c") << "int f(int x) { return x * 5 + 1; }\n";
  for (const char* name : {"a", "b"})
    ASSERT_EQ(mlgo::testing::runProgram(mlgo::testing::clangPath(),
                                        {"-Oz", "-ffunction-sections", "-c", "-o",
                                         (scratch / (std::string(name) + ".o")).string(),
                                         (scratch / (std::string(name) + ".c")).string()}),
              0);
  Expected<std::string> a = textContents(scratch / "a.o"), b = textContents(scratch / "b.o");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), *textBytes(scratch / "a.o"));
  EXPECT_GT(a->size(), 0u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, *textContents(scratch / "a.o"));
}

} // namespace
} // namespace mlgo::deploy
