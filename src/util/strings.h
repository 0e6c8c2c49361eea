// Small string helpers shared by the parsers (config, control lines, trace files).
//
// Pure functions; thread-safe.
#ifndef CCFS_UTIL_STRINGS_H_
#define CCFS_UTIL_STRINGS_H_

#include <cctype>
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

// `s` with ASCII letters in lower case.
inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace ccfs

#endif  // CCFS_UTIL_STRINGS_H_
