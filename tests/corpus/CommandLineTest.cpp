#include "mlgo/corpus/CommandLine.h"

#include <gtest/gtest.h>

namespace mlgo::corpus {
namespace {

using Args = std::vector<std::string>;

Args filtered(const Args& in, const CommandLineFilters& filters, const Args& trailing = {}) {
  Expected<Args> out = applyCommandLineFilters(in, filters, trailing);
  EXPECT_TRUE(out) << (out ? "" : out.error().message);
  return out ? *out : Args{};
}

TEST(CommandLineFilters, DeleteDropsJoinedAndSeparateValues) {
  CommandLineFilters f;
  f.deleteFlags = {"-fprofile-instrument-use-path", "-mllvm"};
  Args in{"-cc1", "-fprofile-instrument-use-path=/x.prof", "-mllvm", "-foo", "-Oz"};
  EXPECT_EQ(filtered(in, f), (Args{"-cc1", "-Oz"}));
}

TEST(CommandLineFilters, DeleteMatchesByPrefix) {
  CommandLineFilters f;
  f.deleteFlags = {"-fdebug"};
  Args in{"-cc1", "-fdebug-compilation-dir=/a", "-fdebug-prefix-map=/b=/c", "-Oz"};
  EXPECT_EQ(filtered(in, f), (Args{"-cc1", "-Oz"}));
}

TEST(CommandLineFilters, ReplaceBothForms) {
  CommandLineFilters f;
  f.replaceFlags = {{"-target-cpu", "znver2"}, {"-mframe-pointer", "all"}};
  Args in{"-cc1", "-target-cpu", "x86-64", "-mframe-pointer=none", "-Oz"};
  EXPECT_EQ(filtered(in, f), (Args{"-cc1", "-target-cpu", "znver2", "-mframe-pointer=all", "-Oz"}));
}

TEST(CommandLineFilters, ReplaceMustMatchExactlyOnce) {
  CommandLineFilters f;
  f.replaceFlags = {{"-target-cpu", "znver2"}};
  Expected<Args> none = applyCommandLineFilters({"-cc1", "-Oz"}, f, {});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("-target-cpu"), std::string::npos);
  Expected<Args> twice =
      applyCommandLineFilters({"-cc1", "-target-cpu", "a", "-target-cpu", "b"}, f, {});
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("more than one"), std::string::npos);
}

TEST(CommandLineFilters, AddGoesAfterTrailingInput) {
  CommandLineFilters f;
  f.addFlags = {"-mllvm", "-enable-ml-inliner=release"};
  EXPECT_EQ(filtered({"-cc1", "-Oz"}, f, {"-x", "ir", "m.bc"}),
            (Args{"-cc1", "-Oz", "-x", "ir", "m.bc", "-mllvm", "-enable-ml-inliner=release"}));
}

TEST(CommandLineFilters, OverlappingRolesAreRejected) {
  CommandLineFilters f;
  f.replaceFlags = {{"-O", "s"}};
  f.deleteFlags = {"-O"};
  EXPECT_FALSE(f.validate());
  CommandLineFilters g;
  g.addFlags = {"-ffoo=1"};
  g.deleteFlags = {"-ffoo"};
  EXPECT_FALSE(g.validate());
  CommandLineFilters ok;
  ok.addFlags = {"-mllvm", "-x"};
  ok.deleteFlags = {"-fembed"};
  EXPECT_TRUE(ok.validate());
}

TEST(CommandLineFilters, ParseReplaceRule) {
  Expected<std::pair<std::string, std::string>> rule = parseReplaceRule("-target-cpu=znver2");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->first, "-target-cpu");
  EXPECT_EQ(rule->second, "znver2");
  Expected<std::pair<std::string, std::string>> value = parseReplaceRule("-mframe-pointer=a=b");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->second, "a=b");
  EXPECT_FALSE(parseReplaceRule("-novalue"));
}

TEST(CompileCommand, DropsEmbedBitcodeAndAppendsInputAndOutput) {
  ModuleSpec m;
  m.name = "lib/a.o";
  m.bitcode = "/corpus/lib/a.o.bc";
  m.storedCommand = {"-cc1",     "-triple", "x86_64-pc-linux-gnu", "-Oz", "-fembed-bitcode=all",
                     "-faddrsig"};
  CommandLineFilters f;
  f.addFlags = {"-mllvm", "-enable-ml-inliner=release"};
  Expected<Args> command = buildCompileCommand(m, f, "/tmp/out.o");
  ASSERT_TRUE(command) << command.error().message;
  EXPECT_EQ(*command, (Args{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-Oz", "-faddrsig", "-x",
                            "ir", "/corpus/lib/a.o.bc", "-mllvm", "-enable-ml-inliner=release",
                            "-o", "/tmp/out.o"}));
}

TEST(CompileCommand, ThinLTOIndexReplacesTheBuildsOwn) {
  ModuleSpec m;
  m.name = "a.o";
  m.bitcode = "/c/a.o.bc";
  m.thinLTOIndex = "/c/a.o.thinlto.bc";
  m.storedCommand = {"-cc1", "-fthinlto-index=/build/a.o.thinlto.bc", "-O2"};
  Expected<Args> command = buildCompileCommand(m, {}, "o.o");
  ASSERT_TRUE(command);
  EXPECT_EQ(*command,
            (Args{"-cc1", "-O2", "-x", "ir", "/c/a.o.bc", "-fthinlto-index=/c/a.o.thinlto.bc",
                  "-mllvm", "-thinlto-assume-merged", "-o", "o.o"}));
}

TEST(CompileCommand, ErrorNamesTheModule) {
  ModuleSpec m;
  m.name = "zz.o";
  m.bitcode = "zz.o.bc";
  m.storedCommand = {"-cc1"};
  CommandLineFilters f;
  f.replaceFlags = {{"-target-cpu", "x"}};
  Expected<Args> command = buildCompileCommand(m, f, "o.o");
  ASSERT_FALSE(command);
  EXPECT_NE(command.error().message.find("\"zz.o\""), std::string::npos);
}

// Corpus commands are code: plugin loading is refused (naming module and
// option) and options that write files of their own are dropped, unless
// explicitly allowed; the user's own --add-flag flags are theirs.
TEST(CompileCommand, PluginsAreRefusedAndFileOutputsDroppedUnlessAllowed) {
  CommandLineFilters allow;
  allow.allowUnsafeCommands = true;
  for (const Args& plugin : {Args{"-load", "/tmp/evil.so"}, Args{"-fpass-plugin=/tmp/evil.so"},
                             Args{"-add-plugin", "x"}}) {
    ModuleSpec m;
    m.name = "bad.o";
    m.bitcode = "bad.o.bc";
    m.storedCommand = {"-cc1", "-Oz"};
    m.storedCommand.insert(m.storedCommand.end(), plugin.begin(), plugin.end());
    Expected<Args> refused = buildCompileCommand(m, {}, "o.o");
    ASSERT_FALSE(refused) << plugin.front();
    EXPECT_NE(refused.error().message.find("\"bad.o\""), std::string::npos);
    EXPECT_NE(refused.error().message.find(plugin.front()), std::string::npos)
        << refused.error().message;
    EXPECT_TRUE(buildCompileCommand(m, allow, "o.o")) << plugin.front();
  }
  ModuleSpec m;
  m.name = "a.o";
  m.bitcode = "a.o.bc";
  m.storedCommand = {"-cc1",        "-Oz",    "-dependency-file",         "a.o.d",
                     "-MT",         "a.o",    "-stats-file=/etc/x",       "-opt-record-file",
                     "/tmp/r.yaml", "-mllvm", "-info-output-file=/tmp/i", "-faddrsig"};
  Expected<Args> dropped = buildCompileCommand(m, {}, "o.o");
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(*dropped, (Args{"-cc1", "-Oz", "-faddrsig", "-x", "ir", "a.o.bc", "-o", "o.o"}));
  Expected<Args> kept = buildCompileCommand(m, allow, "o.o");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->size(), m.storedCommand.size() + 5);
  CommandLineFilters added;
  added.addFlags = {"-stats-file=/tmp/s"};
  Expected<Args> own = buildCompileCommand(m, added, "o.o");
  ASSERT_TRUE(own);
  EXPECT_NE(std::find(own->begin(), own->end(), "-stats-file=/tmp/s"), own->end());
}

} // namespace
} // namespace mlgo::corpus
