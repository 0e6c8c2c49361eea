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
// what a TOML file can hold.
inline bool IsUtf8(std::string_view s) {
  size_t k = 0;
  while (k < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    size_t n = 0;
    unsigned lo = 0x80, hi = 0xbf;  // the second byte's range
    if (c < 0x80) {
      ++k;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;  // overlong
      if (c == 0xed) hi = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;  // overlong
      if (c == 0xf4) hi = 0x8f;  // past U+10FFFF
    } else {
      return false;
    }
    if (k + n >= s.size()) return false;  // cut short
    for (size_t i = 1; i <= n; ++i) {
      const unsigned char d = static_cast<unsigned char>(s[k + i]);
      if (d < (i == 1 ? lo : 0x80u) || d > (i == 1 ? hi : 0xbfu)) return false;
    }
    k += n + 1;
  }
  return true;
}

}  // namespace ccfs

#endif  // CCFS_UTIL_STRINGS_H_
