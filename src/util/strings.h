// Small string helpers shared by the parsers (config, control lines, trace files) and reports.
//
// Pure functions; thread-safe.
#ifndef CCFS_UTIL_STRINGS_H_
#define CCFS_UTIL_STRINGS_H_

#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

namespace ccfs {

// `s` without leading and trailing whitespace (space, \t, \n, \v, \f, \r: std::isspace in the
// "C" locale). The result views `s`'s characters: it must not outlive them (copy it into a
// std::string when `s` is a temporary).
inline std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// A ratio (0.834) as a percentage with one decimal ("83.4%"), as the reports print hit ratios.
inline std::string PercentText(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * ratio);
  return text;
}

// `s` with ASCII letters in lower case.
inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Bytes a reader gave, as a message may quote them: printable ASCII as it is, a backslash as
// "\\", any other byte as "\xNN" (so no control byte, newline or terminal escape reaches a log
// line or a reply). Only the first `limit` bytes are shown, followed by "…" when there were more:
// a message names the bad input, it does not echo all of it.
inline std::string Printable(std::string_view bytes, size_t limit = 64) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const size_t shown = bytes.size() < limit ? bytes.size() : limit;
  for (size_t k = 0; k < shown; ++k) {
    const unsigned char c = static_cast<unsigned char>(bytes[k]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (bytes.size() > limit) out += "\u2026";
  return out;
}

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF):
// what a TOML file can hold. Checked by nlohmann::json's strict encoder (strings.cc).
bool IsUtf8(std::string_view s);

}  // namespace ccfs

#endif  // CCFS_UTIL_STRINGS_H_
