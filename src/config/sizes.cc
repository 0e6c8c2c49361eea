// Sizes with units, as every size key and `ccfs` flag takes them ("512MiB", "8K", 1073741824).
//
// Parsing is exact (integer arithmetic, fractions must come out whole bytes) so that a size
// written by RenderConfig, or typed by a user, is the number of bytes they meant and nothing is
// rounded behind their back; formatting for people rounds (see FormatSize).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ccfs/config.h"
#include "util/strings.h"

namespace ccfs {

Status ParseSize(const std::string& given, uint64_t* bytes) {
  const std::string text(Trim(given));
  // What messages quote of the size given: escaped and cut (a control write's bytes are anyone's).
  const std::string raw = Printable(given);
  if (text.empty()) return Status::InvalidArgument("empty size");
  if (text[0] == '-') return Status::InvalidArgument("size '" + raw + "' must not be negative");
  size_t pos = 0;
  auto digits = [&] {
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    return text.substr(start, pos - start);
  };
  const std::string whole = digits();
  std::string fraction;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    fraction = digits();
    if (fraction.empty()) {
      return Status::InvalidArgument("'" + raw + "' is not a size (expected digits after the '.')");
    }
  }
  if (whole.empty() && fraction.empty()) {
    return Status::InvalidArgument("'" + raw + "' is not a size (expected a number with an optional unit, e.g. 512MiB)");
  }
  while (pos < text.size() && text[pos] == ' ') ++pos;
  const std::string unit = text.substr(pos);
  if (!std::all_of(unit.begin(), unit.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); })) {
    return Status::InvalidArgument("unexpected '" + Printable(unit) + "' after the number in size '" + raw + "'");
  }
  // Binary units (K, KiB) are powers of 1024, decimal ones (KB) powers of 1000; case is ignored.
  static const struct { const char* name; uint64_t multiplier; } kUnits[] = {
      {"", 1}, {"b", 1},
      {"k", 1ull << 10}, {"kib", 1ull << 10}, {"kb", 1000ull},
      {"m", 1ull << 20}, {"mib", 1ull << 20}, {"mb", 1000ull * 1000},
      {"g", 1ull << 30}, {"gib", 1ull << 30}, {"gb", 1000ull * 1000 * 1000},
      {"t", 1ull << 40}, {"tib", 1ull << 40}, {"tb", 1000ull * 1000 * 1000 * 1000},
  };
  std::optional<uint64_t> multiplier;
  const std::string lower_unit = Lower(unit);
  for (const auto& u : kUnits) {
    if (lower_unit == u.name) multiplier = u.multiplier;
  }
  if (!multiplier) {
    return Status::InvalidArgument("unknown unit '" + Printable(unit) + "' in size '" + raw +
                                   "' (use B, K/KiB, M/MiB, G/GiB, T/TiB = powers of 1024 or KB, MB, GB, TB = "
                                   "powers of 1000)");
  }
  // Exact arithmetic: whole * m + fraction * m / 10^digits, which must come out whole.
  auto too_large = [&] { return Status::InvalidArgument("size '" + raw + "' is too large"); };
  unsigned __int128 value = 0;
  for (char c : whole) {
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > std::numeric_limits<uint64_t>::max()) return too_large();
  }
  value *= *multiplier;
  if (value > std::numeric_limits<uint64_t>::max()) return too_large();
  if (!fraction.empty()) {
    if (fraction.size() > 18) return Status::InvalidArgument("size '" + raw + "' has too many decimals");
    unsigned __int128 frac = 0, scale = 1;
    for (char c : fraction) frac = frac * 10 + static_cast<unsigned>(c - '0'), scale *= 10;
    frac *= *multiplier;
    if (frac % scale != 0) return Status::InvalidArgument("size '" + raw + "' is not a whole number of bytes");
    value += frac / scale;
    if (value > std::numeric_limits<uint64_t>::max()) return too_large();
  }
  *bytes = static_cast<uint64_t>(value);
  return Status::Ok();
}

// For people, not for parsing back: non-exact values are rounded to two decimals ("1.33GiB").
std::string FormatSize(uint64_t bytes) {
  static const struct { uint64_t unit; const char* name; } kUnits[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& u : kUnits) {
    if (bytes < u.unit) continue;
    if (bytes % u.unit == 0) return fmt::format("{}{}", bytes / u.unit, u.name);
    std::string s = fmt::format("{:.2f}", static_cast<double>(bytes) / static_cast<double>(u.unit));
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + u.name;
  }
  return fmt::format("{}B", bytes);
}

}  // namespace ccfs
