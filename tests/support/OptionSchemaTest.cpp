#include "mlgo/support/OptionSchema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlgo {
namespace {

enum class Colour { Red, Green };
std::string_view colourName(Colour c) {
  return c == Colour::Red ? "red" : "green";
}

struct Inner {
  double sigma = 0.1;
  std::optional<int> top;
};

struct Sample {
  int count = 3;
  bool verbose = false;
  std::string name = "x";
  std::filesystem::path file;
  std::optional<std::filesystem::path> extra;
  std::vector<int> widths = {64, 64};
  Colour colour = Colour::Red;
  Inner inner;
  std::optional<std::filesystem::path> beside;

  static const OptionSchema<Inner>& innerSchema() {
    static const OptionSchema<Inner> schema = [] {
      OptionSchema<Inner> s;
      s.value(
           "sigma", "σ", [](auto& o) -> auto& { return o.sigma; })
          .positive();
      s.zeroUnset(
          "top", "k best (0: all)", [](auto& o) -> auto& { return o.top; });
      return s;
    }();
    return schema;
  }
  static const OptionSchema<Sample>& schema() {
    static const OptionSchema<Sample> schema = [] {
      OptionSchema<Sample> s;
      s.group("Data");
      s.value(
           "count", "how many", [](auto& o) -> auto& { return o.count; })
          .atLeast(1);
      s.flag(
           "verbose", "say more", [](auto& o) -> auto& { return o.verbose; })
          .negatable();
      s.value(
          "name", "a name", [](auto& o) -> auto& { return o.name; });
      s.value(
          "file", "a file", [](auto& o) -> auto& { return o.file; });
      s.value(
          "extra", "maybe a file", [](auto& o) -> auto& { return o.extra; });
      s.value(
           "widths", "widths", [](auto& o) -> auto& { return o.widths; })
          .delimiter(',');
      s.choice(
          "colour", "a colour", [](auto& o) -> auto& { return o.colour; },
          {Colour::Red, Colour::Green}, colourName);
      s.group("Inner").include(
          innerSchema(), [](auto& o) -> auto& { return o.inner; });
      s.value(
          "beside", "beside the file", [](auto& o) -> auto& { return o.beside; });
      s.finish([](Sample& o, const auto& given) {
        if (!given.contains("beside"))
          o.beside = o.file.string() + ".json";
      });
      s.rule([](const Sample& o) -> Status {
        if (o.inner.top && *o.inner.top > o.count)
          return makeError("--top " + std::to_string(*o.inner.top) + " is above --count");
        return Status::ok();
      });
      return s;
    }();
    return schema;
  }
};

Status applyText(Sample& sample, const std::string& toml, OptionNotes* notes = nullptr) {
  Expected<ConfigValues> values = parseFlatToml(toml, "test.toml");
  if (!values)
    return values.error();
  OptionNotes ignored;
  return Sample::schema().apply(sample, *values, notes ? *notes : ignored);
}

TEST(OptionSchema, DefaultsAreWrittenAsTomlInTheSchemasOrder) {
  Sample defaults;
  EXPECT_EQ(Sample::schema().toToml(defaults),
            "count = 3\nverbose = false\nname = \"x\"\nwidths = [64, 64]\ncolour = \"red\"\n"
            "sigma = 0.1\ntop = 0\n");
}

TEST(OptionSchema, EveryKindRoundTripsThroughItsToml) {
  Sample changed;
  changed.count = 7;
  changed.verbose = true;
  changed.name = "quote \" and \\ back";
  changed.file = "/tmp/a b.h5";
  changed.extra = "extra.json";
  changed.widths = {8};
  changed.colour = Colour::Green;
  changed.inner.sigma = 1.0 / 3.0; // needs all 17 digits
  changed.inner.top = 2;
  changed.beside = "elsewhere.json";
  const std::string toml = Sample::schema().toToml(changed);

  Sample restored;
  ASSERT_TRUE(applyText(restored, toml));
  EXPECT_EQ(restored.count, 7);
  EXPECT_TRUE(restored.verbose);
  EXPECT_EQ(restored.name, changed.name);
  EXPECT_EQ(restored.file, changed.file);
  EXPECT_EQ(restored.extra, changed.extra);
  EXPECT_EQ(restored.widths, changed.widths);
  EXPECT_EQ(restored.colour, Colour::Green);
  EXPECT_EQ(restored.inner.sigma, changed.inner.sigma);
  EXPECT_EQ(restored.inner.top, 2);
  EXPECT_EQ(restored.beside, changed.beside);
  EXPECT_EQ(Sample::schema().toToml(restored), toml);
}

TEST(OptionSchema, IncludedFieldsTakeTheIncludersGroup) {
  EXPECT_EQ(Sample::schema().find("count")->group, "Data");
  EXPECT_EQ(Sample::schema().find("sigma")->group, "Inner");
  EXPECT_TRUE(Sample::schema().find("verbose")->isSwitch);
  EXPECT_TRUE(Sample::schema().find("widths")->isList);
  EXPECT_EQ(Sample::schema().find("colour")->choices, (std::vector<std::string>{"red", "green"}));
}

TEST(OptionSchema, ErrorsNameTheFlagAndTheValue) {
  Sample s;
  Status bad = applyText(s, "count = \"many\"\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--count: must be a whole number (got many)");
  bad = applyText(s, "count = 0\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--count: must be a whole number of at least 1 (got 0)");
  bad = applyText(s, "sigma = -1\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--sigma: must be positive (got -1)");
  bad = applyText(s, "colour = \"blue\"\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--colour: 'blue' is not one of red | green");
  bad = applyText(s, "top = -2\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--top: must be at least 0, 0 for unset (got -2)");
  EXPECT_FALSE(parseFlatToml("count = [1, 2", "broken.toml"));
  Expected<ConfigValues> nested = parseFlatToml("[section]\ncount = 1\n", "nested.toml");
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("nested.toml: key 'section'"), std::string::npos);
}

TEST(OptionSchema, ZeroIsUnsetAndFinishesAndRulesRunAfterTheValues) {
  Sample s;
  ASSERT_TRUE(applyText(s, "file = \"run.h5\"\ntop = 0\n"));
  EXPECT_FALSE(s.inner.top);
  EXPECT_EQ(s.beside, std::filesystem::path("run.h5.json")); // the finish: not given
  // Applied in the schema's order whatever the config's: count is known
  // when the rule looks at top.
  Status rule = applyText(s, "top = 5\ncount = 4\n");
  ASSERT_FALSE(rule);
  EXPECT_EQ(rule.error().message, "--top 5 is above --count");
  EXPECT_TRUE(applyText(s, "top = 4\ncount = 4\n"));
}

TEST(OptionSchema, KeysOfOtherSchemasAreLeftAlone) {
  Sample s;
  ASSERT_TRUE(applyText(s, "workers = 3\ncount = 2\n"));
  EXPECT_EQ(s.count, 2);
}

// Two alternatives sharing one flag ("share"), each with one of its own.
struct Fast {
  double share = 0.5;
  int steps = 10;
  static const OptionSchema<Fast>& schema() {
    static const OptionSchema<Fast> schema = [] {
      OptionSchema<Fast> s;
      s.value(
          "share", "shared", [](auto& o) -> auto& { return o.share; });
      s.value(
          "steps", "fast's own", [](auto& o) -> auto& { return o.steps; });
      return s;
    }();
    return schema;
  }
};
struct Careful {
  double radius = 1;
  double share = 0.5;
  static const OptionSchema<Careful>& schema() {
    static const OptionSchema<Careful> schema = [] {
      OptionSchema<Careful> s;
      s.value(
          "radius", "careful's own", [](auto& o) -> auto& { return o.radius; });
      s.value(
          "share", "shared", [](auto& o) -> auto& { return o.share; });
      s.rule([](const Careful& c) -> Status {
        return c.radius < 100 ? Status::ok() : makeError("--radius too large");
      });
      return s;
    }();
    return schema;
  }
};
using Either = std::variant<Fast, Careful>;

TEST(OptionSchema, AlternativesShareFlagsByNameAndNoteTheUnusedOnes) {
  const OptionSchema<Either> schema =
      alternativesSchema<Fast, Careful>("method", "which one", {"fast", "careful"});
  std::vector<std::string> names;
  for (const auto& f : schema.fields())
    names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"method", "share", "steps", "radius"}));

  Either chosen;
  OptionNotes notes;
  ASSERT_TRUE(schema.apply(
      chosen, {{"share", {"0.25"}}, {"method", {"careful"}}, {"radius", {"3"}}}, notes));
  ASSERT_TRUE(std::holds_alternative<Careful>(chosen));
  EXPECT_EQ(std::get<Careful>(chosen).share, 0.25); // the selector is applied first
  EXPECT_EQ(std::get<Careful>(chosen).radius, 3);
  EXPECT_TRUE(notes.unused.empty());
  // Fast's own flag: shown at its default, noted only when set away from it.
  EXPECT_EQ(schema.find("steps")->get(chosen), std::vector<std::string>{"10"});
  EXPECT_FALSE(schema.find("steps")->applies(chosen));
  ASSERT_TRUE(schema.apply(chosen, {{"steps", {"10"}}}, notes));
  EXPECT_TRUE(notes.unused.empty());
  ASSERT_TRUE(schema.apply(chosen, {{"steps", {"20"}}}, notes));
  ASSERT_EQ(notes.unused.size(), 1u);
  EXPECT_EQ(notes.unused[0].field, "steps");
  EXPECT_EQ(notes.unused[0].because, "--method careful");
  // An unused value is still checked as its declarer would.
  Status bad = schema.apply(chosen, {{"steps", {"x"}}}, notes);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "--steps: must be a whole number (got x)");
  // Rules run for the chosen alternative only.
  Status rule = schema.apply(chosen, {{"radius", {"500"}}}, notes);
  ASSERT_FALSE(rule);
  EXPECT_EQ(rule.error().message, "--radius too large");
  Either fast;
  EXPECT_TRUE(schema.apply(fast, {{"radius", {"500"}}}, notes));
  EXPECT_FALSE(schema.apply(fast, {{"method", {"slow"}}}, notes));
  // The chosen alternative round-trips through its TOML.
  std::get<Careful>(chosen).radius = 7;
  Either restored;
  Expected<ConfigValues> values = parseFlatToml(schema.toToml(chosen), "either.toml");
  ASSERT_TRUE(values);
  OptionNotes none;
  ASSERT_TRUE(schema.apply(restored, *values, none));
  EXPECT_TRUE(std::holds_alternative<Careful>(restored));
  EXPECT_EQ(std::get<Careful>(restored).radius, 7);
  EXPECT_TRUE(none.unused.empty());
}

} // namespace
} // namespace mlgo
