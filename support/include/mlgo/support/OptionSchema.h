// Options as data. An Options struct describes each of its fields once: the
// flag and config key, its help, its group, whether --resume may change it,
// and how its value reads and writes as text. Everything that handles
// options is generated from that description:
//   - a tool's flags and --help (apps/SchemaFlags.h binds a schema to CLI11);
//   - the effective config a run file stores (`toToml`, `toValues`);
//   - options read back from a config or a run file (`apply` over
//     `parseFlatToml`), which is how a library restores a run itself.
// A new option is one line in its struct's schema. Values travel as text,
// as a command line or a TOML config gives them; numbers are written in the
// shortest form that reads back as the same value.
//
//   OptionSchema<SamplingOptions> s;
//   s.value("sigma", "Perturbation scale σ", [](auto& o) -> auto& { return o.sigma; })
//       .positive();
//   s.flag("evaluate-center", "Also compile the unperturbed policy",
//          [](auto& o) -> auto& { return o.evaluateCenter; }).negatable();
#pragma once

#include "mlgo/support/Expected.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace mlgo {

// --- Values as text ---------------------------------------------------------

// How a config file writes a value.
enum class TextKind { Boolean, Integer, Number, String };

template <class T, class = void> struct TextCodec;

template <> struct TextCodec<bool> {
  static constexpr TextKind kind = TextKind::Boolean;
  static Expected<bool> parse(std::string_view text) {
    if (text == "true" || text == "1" || text == "on" || text == "yes")
      return true;
    if (text == "false" || text == "0" || text == "off" || text == "no")
      return false;
    return makeError("must be true or false (got " + std::string(text) + ")");
  }
  static std::string format(bool value) { return value ? "true" : "false"; }
};

template <class T>
struct TextCodec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr TextKind kind = TextKind::Integer;
  static Expected<T> parse(std::string_view text) {
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
      return makeError("must be a whole number" +
                       std::string(std::is_unsigned_v<T> ? " of at least 0" : "") + " (got " +
                       std::string(text) + ")");
    return value;
  }
  static std::string format(T value) { return std::to_string(value); }
};

template <class T> struct TextCodec<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static constexpr TextKind kind = TextKind::Number;
  static Expected<T> parse(std::string_view text) {
    T value{};
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
      return makeError("must be a number (got " + std::string(text) + ")");
    return value;
  }
  static std::string format(T value) {
    char buffer[40];
    auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, error == std::errc() ? end : buffer);
  }
};

template <> struct TextCodec<std::string> {
  static constexpr TextKind kind = TextKind::String;
  static Expected<std::string> parse(std::string_view text) { return std::string(text); }
  static std::string format(const std::string& value) { return value; }
};

template <> struct TextCodec<std::filesystem::path> {
  static constexpr TextKind kind = TextKind::String;
  static Expected<std::filesystem::path> parse(std::string_view text) {
    return std::filesystem::path(text);
  }
  static std::string format(const std::filesystem::path& value) { return value.string(); }
};

// A TOML value: numbers and booleans as they are, strings quoted.
std::string tomlScalar(const std::string& text, TextKind kind);

// A TOML config's keys and their values as text (an array gives several),
// in the file's order, each with the sections it is in. Errors name
// `origin` with the line and column, or the key.
struct ConfigEntry {
  std::vector<std::string> parents;
  std::string name;
  std::vector<std::string> values;
};
Expected<std::vector<ConfigEntry>> parseToml(std::string_view toml, const std::string& origin);
// The same for a flat config (a run file's): a section is an error.
using ConfigValues = std::vector<std::pair<std::string, std::vector<std::string>>>;
Expected<ConfigValues> parseFlatToml(std::string_view toml, const std::string& origin);

// --- Fields -------------------------------------------------------------------

// What applying values noticed besides errors: values given for fields that
// mean nothing with the options chosen (an optimiser's own flags when
// another optimiser runs), with the choice that makes them unused
// ("--optimizer sep-cma-es").
struct OptionNotes {
  struct Unused {
    std::string field;
    std::string because;
  };
  std::vector<Unused> unused;
};

// What a field is, apart from the struct it is in.
struct OptionInfo {
  std::string name;      // the long flag without "--" and the config key
  std::string shortName; // a one-letter flag ("o" for -o), or empty
  std::string help;
  std::string group; // --help's section; empty: the including schema's
  TextKind kind = TextKind::String;
  bool isSwitch = false;  // a flag without a value (true when given)
  bool negatable = false; // a switch that also has --no-NAME
  bool isList = false;    // several values (repeated, or split at `delimiter`)
  char delimiter = 0;
  bool resumable = false;           // --resume may change it (never the run's numbers)
  std::vector<std::string> choices; // the values allowed; empty: any
  std::string defaultNote;          // --help's default when not the value ("beside -o")
};

template <class Options> struct OptionField : OptionInfo {
  // The value as text: what a config stores and --help shows as the default.
  // Empty: unset (not stored).
  std::function<std::vector<std::string>(const Options&)> get;
  // Sets the field from text; the error says what is wrong with the value
  // (`apply` names the flag).
  std::function<Status(Options&, const std::vector<std::string>&, OptionNotes&)> set;
  // Whether the field means anything for these options (set so far).
  std::function<bool(const Options&)> applies;
};

// An accessor `[](auto& o) -> auto& { return o.member; }` and the type it
// reaches.
template <class Options, class Member>
using MemberType = std::remove_reference_t<std::invoke_result_t<Member, Options&>>;

template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type {};
template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type {};

template <class Options> class OptionSchema {
public:
  using Field = OptionField<Options>;
  using Rule = std::function<Status(const Options&)>;
  // Runs after values are applied, with the names given.
  using Finish = std::function<void(Options&, const std::set<std::string, std::less<>>&)>;

  // Chained settings of the field just added.
  class Builder {
  public:
    Builder(OptionSchema& schema, size_t index) : schema_(&schema), index_(index) {}
    Builder& shortName(std::string name) {
      field().shortName = std::move(name);
      return *this;
    }
    Builder& negatable() {
      field().negatable = true;
      return *this;
    }
    Builder& resumable() {
      field().resumable = true;
      return *this;
    }
    Builder& delimiter(char c) {
      field().delimiter = c;
      return *this;
    }
    Builder& defaultNote(std::string note) {
      field().defaultNote = std::move(note);
      return *this;
    }
    // Numeric bounds on every value given (whole numbers and numbers alike).
    Builder& atLeast(double minimum) {
      const bool whole = field().kind == TextKind::Integer;
      return check(
          [minimum](double v) { return v >= minimum; },
          std::string(whole ? "must be a whole number of at least " : "must be at least ") +
              TextCodec<double>::format(minimum));
    }
    Builder& positive() {
      return check([](double v) { return v > 0; }, "must be positive");
    }
    Builder& check(std::function<bool(double)> ok, std::string requirement) {
      auto set = std::move(field().set);
      field().set = [set, ok, requirement](Options& o, const std::vector<std::string>& values,
                                           OptionNotes& notes) -> Status {
        for (const std::string& text : values) {
          Expected<double> number = TextCodec<double>::parse(text);
          if (number && !ok(*number))
            return makeError(requirement + " (got " + text + ")");
        }
        return set(o, values, notes);
      };
      return *this;
    }

  private:
    Field& field() { return schema_->fields_[index_]; }
    OptionSchema* schema_;
    size_t index_;
  };

  // Fields added from here on are in this --help section.
  OptionSchema& group(std::string name) {
    group_ = std::move(name);
    return *this;
  }

  // A field held in a member: a scalar, a bool (a switch: `flag`), an
  // optional (unset: empty, not stored) or a vector (a list).
  template <class Member> Builder value(std::string name, std::string help, Member member) {
    using T = MemberType<Options, Member>;
    Field f = base(std::move(name), std::move(help));
    if constexpr (IsVector<T>::value) {
      using E = typename T::value_type;
      f.kind = TextCodec<E>::kind;
      f.isList = true;
      f.get = [member](const Options& o) {
        std::vector<std::string> texts;
        for (const E& e : member(o))
          texts.push_back(TextCodec<E>::format(e));
        return texts;
      };
      f.set = [member](Options& o, const std::vector<std::string>& texts, OptionNotes&) -> Status {
        T values;
        for (const std::string& text : texts) {
          MLGO_ASSIGN_OR_RETURN(E value, TextCodec<E>::parse(text));
          values.push_back(std::move(value));
        }
        member(o) = std::move(values);
        return Status::ok();
      };
    } else if constexpr (IsOptional<T>::value) {
      using E = typename T::value_type;
      f.kind = TextCodec<E>::kind;
      f.get = [member](const Options& o) {
        const T& v = member(o);
        return v ? std::vector<std::string>{TextCodec<E>::format(*v)} : std::vector<std::string>{};
      };
      f.set = [member](Options& o, const std::vector<std::string>& texts, OptionNotes&) -> Status {
        if (texts.empty() || texts.front().empty()) {
          member(o).reset();
          return Status::ok();
        }
        MLGO_ASSIGN_OR_RETURN(E value, TextCodec<E>::parse(single(texts)));
        member(o) = std::move(value);
        return Status::ok();
      };
    } else {
      f.kind = TextCodec<T>::kind;
      f.isSwitch = std::is_same_v<T, bool>;
      f.get = [member](const Options& o) {
        std::string text = TextCodec<T>::format(member(o));
        // An empty text is no value: not stored, not shown as a default.
        return text.empty() ? std::vector<std::string>{} : std::vector<std::string>{text};
      };
      f.set = [member](Options& o, const std::vector<std::string>& texts, OptionNotes&) -> Status {
        MLGO_ASSIGN_OR_RETURN(T value, TextCodec<T>::parse(single(texts)));
        member(o) = std::move(value);
        return Status::ok();
      };
    }
    return push(std::move(f));
  }

  // A switch (bool member); `.negatable()` adds --no-NAME.
  template <class Member> Builder flag(std::string name, std::string help, Member member) {
    static_assert(std::is_same_v<MemberType<Options, Member>, bool>);
    return value(std::move(name), std::move(help), member);
  }

  // An optional number given as 0 for unset ("0: no clipping").
  template <class Member> Builder zeroUnset(std::string name, std::string help, Member member) {
    using E = typename MemberType<Options, Member>::value_type;
    Field f = base(std::move(name), std::move(help));
    f.kind = TextCodec<E>::kind;
    f.get = [member](const Options& o) {
      const auto& v = member(o);
      return std::vector<std::string>{TextCodec<E>::format(v ? *v : E{})};
    };
    f.set = [member](Options& o, const std::vector<std::string>& texts, OptionNotes&) -> Status {
      MLGO_ASSIGN_OR_RETURN(E value, TextCodec<E>::parse(single(texts)));
      if (value < E{})
        return makeError("must be at least 0, 0 for unset (got " + single(texts) + ")");
      member(o) = value == E{} ? std::nullopt : std::optional<E>(value);
      return Status::ok();
    };
    return push(std::move(f));
  }

  // An enumerated member given by name: `values` and their names.
  template <class Member, class NameOf>
  Builder choice(std::string name, std::string help, Member member,
                 std::vector<MemberType<Options, Member>> values, NameOf nameOf) {
    using E = MemberType<Options, Member>;
    Field f = base(std::move(name), std::move(help));
    for (E v : values)
      f.choices.emplace_back(nameOf(v));
    f.get = [member, nameOf](const Options& o) {
      return std::vector<std::string>{std::string(nameOf(member(o)))};
    };
    f.set = [member, values, nameOf](Options& o, const std::vector<std::string>& texts,
                                     OptionNotes&) -> Status {
      const std::string& text = single(texts);
      for (E v : values)
        if (nameOf(v) == text) {
          member(o) = v;
          return Status::ok();
        }
      return makeError("'" + text + "' is not one of " + joinChoices(values, nameOf));
    };
    return push(std::move(f));
  }

  // A field with its own reading and writing.
  Builder custom(Field f) {
    if (f.group.empty())
      f.group = group_;
    if (!f.applies)
      f.applies = [](const Options&) { return true; };
    return push(std::move(f));
  }

  // Every field, rule and finish of a member's own schema, in its order; its
  // fields without a group take this schema's current one.
  template <class Sub, class Member>
  OptionSchema& include(const OptionSchema<Sub>& sub, Member member) {
    for (const OptionField<Sub>& s : sub.fields()) {
      Field f;
      static_cast<OptionInfo&>(f) = s;
      if (f.group.empty())
        f.group = group_;
      f.get = [get = s.get, member](const Options& o) { return get(member(o)); };
      f.set = [set = s.set, member](Options& o, const std::vector<std::string>& texts,
                                    OptionNotes& notes) { return set(member(o), texts, notes); };
      f.applies = [applies = s.applies, member](const Options& o) { return applies(member(o)); };
      push(std::move(f));
    }
    for (const auto& rule : sub.rules())
      rules_.push_back([rule, member](const Options& o) { return rule(member(o)); });
    for (const auto& finish : sub.finishes())
      finishes_.push_back(
          [finish, member](Options& o, const auto& given) { finish(member(o), given); });
    return *this;
  }

  // A check across fields, in flag terms, after values are applied.
  OptionSchema& rule(Rule r) {
    rules_.push_back(std::move(r));
    return *this;
  }
  // A completion after values are applied (a default that depends on
  // another field, e.g. the policy file beside the run file).
  OptionSchema& finish(Finish f) {
    finishes_.push_back(std::move(f));
    return *this;
  }

  const std::vector<Field>& fields() const { return fields_; }
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<Finish>& finishes() const { return finishes_; }
  const Field* find(std::string_view name) const {
    for (const Field& f : fields_)
      if (f.name == name)
        return &f;
    return nullptr;
  }

  // Sets `options` from `given` (values by field name), in the schema's
  // order, then runs its finishes and rules. Names the schema does not know
  // are left alone (a config may hold another schema's too). Errors name the
  // flag: "--sigma: must be positive, got -1".
  Status apply(Options& options, const ConfigValues& given, OptionNotes& notes) const {
    std::set<std::string, std::less<>> names;
    for (const Field& f : fields_) {
      auto it = std::find_if(given.begin(), given.end(),
                             [&](const auto& entry) { return entry.first == f.name; });
      if (it == given.end())
        continue;
      names.insert(f.name);
      if (Status s = f.set(options, it->second, notes); !s)
        return makeError("--" + f.name + ": " + s.error().message);
    }
    for (const Finish& f : finishes_)
      f(options, names);
    for (const Rule& r : rules_)
      MLGO_TRY(r(options));
    return Status::ok();
  }

  // Every field with a value, as TOML a config reads back ("name = value",
  // lists as arrays), in the schema's order; with `unlessAsIn`, only the
  // fields whose value differs from theirs (what a run changed).
  std::string toToml(const Options& options, const Options* unlessAsIn = nullptr) const {
    std::string toml;
    for (const Field& f : fields_) {
      std::vector<std::string> values = f.get(options);
      if (values.empty() || (unlessAsIn && values == f.get(*unlessAsIn)))
        continue;
      std::string list;
      for (const std::string& v : values)
        list += (list.empty() ? "" : ", ") + tomlScalar(v, f.kind);
      toml += f.name + " = " + (f.isList ? "[" + list + "]" : list) + "\n";
    }
    return toml;
  }
  // The same flattened: name → values joined with ','.
  void toValues(const Options& options,
                std::map<std::string, std::string, std::less<>>& values) const {
    for (const Field& f : fields_) {
      std::vector<std::string> texts = f.get(options);
      if (!texts.empty())
        values[f.name] = join(texts, ",");
    }
  }

  static std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string joined;
    for (const std::string& p : parts)
      joined += (joined.empty() ? "" : separator) + p;
    return joined;
  }

private:
  Field base(std::string name, std::string help) const {
    Field f;
    f.name = std::move(name);
    f.help = std::move(help);
    f.group = group_;
    f.applies = [](const Options&) { return true; };
    return f;
  }
  Builder push(Field f) {
    fields_.push_back(std::move(f));
    return Builder(*this, fields_.size() - 1);
  }
  static const std::string& single(const std::vector<std::string>& texts) {
    static const std::string empty;
    return texts.empty() ? empty : texts.back();
  }
  template <class E, class NameOf>
  static std::string joinChoices(const std::vector<E>& values, NameOf nameOf) {
    std::vector<std::string> names;
    for (E v : values)
      names.emplace_back(nameOf(v));
    return join(names, " | ");
  }

  std::string group_;
  std::vector<Field> fields_;
  std::vector<Rule> rules_;
  std::vector<Finish> finishes_;
};

// --- Alternatives -------------------------------------------------------------

namespace detail {

// The variant holding alternative `index`, default-constructed.
template <class... Alternatives> std::variant<Alternatives...> defaultAlternative(size_t index) {
  std::variant<Alternatives...> result;
  size_t i = 0;
  ((i++ == index ? (void)(result = Alternatives{}) : (void)0), ...);
  return result;
}

// The field that picks the alternative by name; a new choice starts from
// that alternative's defaults.
template <class... Alternatives>
OptionField<std::variant<Alternatives...>> selectorField(std::string selector, std::string help,
                                                         std::vector<std::string> names) {
  using Variant = std::variant<Alternatives...>;
  OptionField<Variant> f;
  f.name = std::move(selector);
  f.help = std::move(help);
  f.choices = names;
  f.get = [names](const Variant& v) { return std::vector<std::string>{names[v.index()]}; };
  f.set = [names](Variant& v, const std::vector<std::string>& texts, OptionNotes&) -> Status {
    const std::string given = texts.empty() ? std::string() : texts.back();
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == given) {
        if (v.index() != i)
          v = defaultAlternative<Alternatives...>(i);
        return Status::ok();
      }
    return makeError("'" + given + "' is not one of " + OptionSchema<Variant>::join(names, " | "));
  };
  return f;
}

// One merged field from each alternative's projection of it (or none): it
// reads and writes the chosen alternative's; one the chosen alternative
// lacks shows its first declarer's default, is checked as that declarer
// would, and is noted as unused when set away from that default.
template <class... Alternatives>
OptionField<std::variant<Alternatives...>>
mergedField(std::vector<std::optional<OptionField<std::variant<Alternatives...>>>> byAlternative,
            const std::string& selector, const std::vector<std::string>& names) {
  using Variant = std::variant<Alternatives...>;
  using Field = OptionField<Variant>;
  size_t first = 0;
  while (!byAlternative[first])
    ++first;
  Field f = *byAlternative[first];
  auto own = std::make_shared<std::vector<std::optional<Field>>>(std::move(byAlternative));
  const Variant firstDefault = defaultAlternative<Alternatives...>(first);
  f.get = [own, first, firstDefault](const Variant& v) {
    const auto& chosen = (*own)[v.index()];
    return chosen ? chosen->get(v) : (*own)[first]->get(firstDefault);
  };
  f.set = [own, first, firstDefault, names, selector](
              Variant& v, const std::vector<std::string>& texts, OptionNotes& notes) -> Status {
    if (const auto& chosen = (*own)[v.index()])
      return chosen->set(v, texts, notes);
    const Field& declarer = *(*own)[first];
    Variant scratch = firstDefault;
    MLGO_TRY(declarer.set(scratch, texts, notes));
    if (declarer.get(scratch) != declarer.get(firstDefault))
      notes.unused.push_back({declarer.name, "--" + selector + " " + names[v.index()]});
    return Status::ok();
  };
  f.applies = [own](const Variant& v) { return (*own)[v.index()].has_value(); };
  return f;
}

} // namespace detail

// The schema of a variant of Options structs (one optimiser's options of
// several), each with its own static schema(): a selector field (`selector`,
// first) that picks the alternative by name (`names`, in the variant's
// order), then every alternative's fields merged by name
// (detail::mergedField). Rules run for the chosen alternative.
template <class... Alternatives>
OptionSchema<std::variant<Alternatives...>>
alternativesSchema(std::string selector, std::string help, std::vector<std::string> names) {
  using Variant = std::variant<Alternatives...>;
  using Field = OptionField<Variant>;
  OptionSchema<Variant> schema;
  schema.custom(detail::selectorField<Alternatives...>(selector, std::move(help), names));
  // Per name, in first-seen order: each alternative's projected field.
  std::vector<std::pair<std::string, std::vector<std::optional<Field>>>> merged;
  auto mergeAlternative = [&]<size_t I>(std::integral_constant<size_t, I>, const auto& sub) {
    OptionSchema<Variant> projected;
    // Only reached for the chosen alternative, or a scratch one of its kind.
    projected.include(
        sub, [](auto& v) -> auto& { return std::get<I>(v); });
    for (const Field& f : projected.fields()) {
      auto it = std::find_if(merged.begin(), merged.end(),
                             [&](const auto& m) { return m.first == f.name; });
      if (it == merged.end())
        it = merged.emplace(merged.end(), f.name,
                            std::vector<std::optional<Field>>(sizeof...(Alternatives)));
      it->second[I] = f;
    }
    for (const auto& rule : sub.rules())
      schema.rule([rule](const Variant& v) -> Status {
        return v.index() == I ? rule(std::get<I>(v)) : Status::ok();
      });
  };
  [&]<size_t... I>(std::index_sequence<I...>) {
    (mergeAlternative(std::integral_constant<size_t, I>{}, Alternatives::schema()), ...);
  }
  (std::index_sequence_for<Alternatives...>{});
  for (auto& [name, byAlternative] : merged)
    schema.custom(detail::mergedField<Alternatives...>(std::move(byAlternative), selector, names));
  return schema;
}

} // namespace mlgo
