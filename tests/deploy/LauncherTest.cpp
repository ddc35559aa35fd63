// The launcher's reading of compiler command lines and its plan: which
// commands get the plugin, the LTO link flag, --best-of; where the policy
// comes from. No compiler runs here (tests/deploy/*.sh build real code).
#include "mlgo/deploy/Launcher.h"
#include "TestSupport.h"
#include "mlgo/deploy/CompilerCommand.h"
#include "mlgo/deploy/ElfText.h"
#include "mlgo/evaluators/ObjectCode.h"
#include "mlgo/policies/PolicyLocation.h"

#include <gtest/gtest.h>

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

// Plans with a fake environment; the compiler is real clang-22 (the plan
// checks it is the LLVM the plugin is built for) but is not run.
class LauncherPlan : public ::testing::Test {
protected:
  void SetUp() override {
    std::ofstream(scratch_ / "policy.json") << "{}";
    environment_["MLGO_POLICY"] = (scratch_ / "policy.json").string();
    environment_["MLGO_INLINER_PLUGIN"] = (scratch_ / "policy.json").string(); // any file
  }
  Expected<LaunchPlan> plan(const Arguments& arguments, const std::string& program = "mlgo-cc") {
    return planLaunch(program, "/nonexistent/mlgo-cc", arguments, [this](const char* name) {
      auto found = environment_.find(name);
      return found == environment_.end() ? nullptr : found->second.c_str();
    });
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
}

} // namespace
} // namespace mlgo::deploy
