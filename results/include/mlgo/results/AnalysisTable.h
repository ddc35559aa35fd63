// The tables mlgo-results prints: typed cells rendered either as aligned
// text for people or as CSV for pandas and spreadsheets. Keeping the values
// typed (not pre-formatted strings) is what lets one table serve both: text
// rounds and adds units, CSV writes every double so that it reads back bit
// for bit (shortest round-trip form) and leaves missing values empty (pandas
// reads an empty field as NaN).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mlgo::results {

enum class ValueFormat {
  Text,          // as it is
  Integer,       // 1234; a double that is not integral gets one decimal
  Decimal,       // fixed, `precision` decimals
  SignedDecimal, // as Decimal, always with a sign
  Percent,       // a fraction shown as a signed percentage (text only)
};

// Whether a column appears in both renderings. Text tables fold some
// columns together ("2/3" steps) that CSV keeps apart.
enum class ColumnVisibility { Both, TextOnly, CsvOnly };

struct Column {
  std::string name;  // CSV header: snake_case, stable (scripts depend on it)
  std::string title; // text header; the name if empty
  ValueFormat format = ValueFormat::Text;
  int precision = 5; // decimals for Decimal, SignedDecimal and Percent
  ColumnVisibility visibility = ColumnVisibility::Both;
};

// monostate: no value (text "-", CSV empty); so is a NaN double.
using Value = std::variant<std::monostate, std::string, int64_t, double>;

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows; // each exactly columns.size() long

  std::optional<size_t> columnIndex(std::string_view name) const;
};

// Aligned columns with a header line; numbers right-aligned, text left.
std::string renderText(const Table& table);
// RFC 4180: a header of column names, fields quoted where they contain a
// comma, quote or line break; lines end with "\n".
std::string renderCsv(const Table& table);
// One field as CSV writes it (unquoted).
std::string csvField(const Value& value);

} // namespace mlgo::results
