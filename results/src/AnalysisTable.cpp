#include "mlgo/results/AnalysisTable.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace mlgo::results {

namespace {

bool missing(const Value& value) {
  if (std::holds_alternative<std::monostate>(value))
    return true;
  if (const double* d = std::get_if<double>(&value))
    return std::isnan(*d);
  return false;
}

std::string shortest(double value) {
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  std::array<char, 64> buffer;
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), end);
}

std::string fixed(double value, int precision, bool sign) {
  std::array<char, 64> buffer;
  std::snprintf(buffer.data(), buffer.size(), sign ? "%+.*f" : "%.*f", precision, value);
  return buffer.data();
}

std::string textOf(const Value& value, const Column& column) {
  if (missing(value))
    return "-";
  if (const std::string* s = std::get_if<std::string>(&value))
    return *s;
  double number = 0;
  if (const int64_t* i = std::get_if<int64_t>(&value)) {
    if (column.format == ValueFormat::Integer || column.format == ValueFormat::Text)
      return std::to_string(*i);
    number = static_cast<double>(*i);
  } else {
    number = std::get<double>(value);
  }
  if (std::isinf(number))
    return number > 0 ? "inf" : "-inf";
  switch (column.format) {
  case ValueFormat::Text:
    return shortest(number);
  case ValueFormat::Integer:
    return number == std::floor(number) ? fixed(number, 0, false) : fixed(number, 1, false);
  case ValueFormat::Decimal:
    return fixed(number, column.precision, false);
  case ValueFormat::SignedDecimal:
    return fixed(number, column.precision, true);
  case ValueFormat::Percent:
    return fixed(100 * number, column.precision, true) + "%";
  }
  return shortest(number);
}

bool rightAligned(const Column& column) {
  return column.format != ValueFormat::Text;
}

std::string quoted(std::string field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos)
    return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

} // namespace

std::optional<size_t> Table::columnIndex(std::string_view name) const {
  for (size_t c = 0; c < columns.size(); ++c)
    if (columns[c].name == name)
      return c;
  return std::nullopt;
}

std::string csvField(const Value& value) {
  if (missing(value))
    return "";
  if (const std::string* s = std::get_if<std::string>(&value))
    return *s;
  if (const int64_t* i = std::get_if<int64_t>(&value))
    return std::to_string(*i);
  return shortest(std::get<double>(value));
}

std::string renderText(const Table& table) {
  std::vector<size_t> shown;
  for (size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c].visibility != ColumnVisibility::CsvOnly)
      shown.push_back(c);
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header;
  for (size_t c : shown)
    header.push_back(table.columns[c].title.empty() ? table.columns[c].name
                                                    : table.columns[c].title);
  cells.push_back(header);
  for (const std::vector<Value>& row : table.rows) {
    std::vector<std::string> line;
    for (size_t c : shown)
      line.push_back(textOf(row[c], table.columns[c]));
    cells.push_back(std::move(line));
  }
  // Widths in code points, so "σ" or "≈" do not skew the columns.
  auto width = [](const std::string& s) {
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
  };
  std::vector<size_t> widths(shown.size(), 0);
  for (const std::vector<std::string>& line : cells)
    for (size_t i = 0; i < line.size(); ++i)
      widths[i] = std::max(widths[i], width(line[i]));
  std::string out;
  for (const std::vector<std::string>& line : cells) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      std::string pad(widths[i] - width(line[i]), ' ');
      if (i > 0)
        text += "  ";
      bool right = rightAligned(table.columns[shown[i]]);
      text += right ? pad + line[i] : line[i] + (i + 1 < line.size() ? pad : "");
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    out += text + "\n";
  }
  return out;
}

std::string renderCsv(const Table& table) {
  std::vector<size_t> shown;
  for (size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c].visibility != ColumnVisibility::TextOnly)
      shown.push_back(c);
  std::string out;
  for (size_t i = 0; i < shown.size(); ++i)
    out += (i ? "," : "") + quoted(table.columns[shown[i]].name);
  out += "\n";
  for (const std::vector<Value>& row : table.rows) {
    for (size_t i = 0; i < shown.size(); ++i)
      out += (i ? "," : "") + quoted(csvField(row[shown[i]]));
    out += "\n";
  }
  return out;
}

} // namespace mlgo::results
