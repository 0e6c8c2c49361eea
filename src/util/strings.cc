#include "util/strings.h"

#include <string>

#include <nlohmann/json.hpp>

namespace ccfs {

bool IsUtf8(std::string_view s) {
  // JSON text is UTF-8 too: the encoder refuses a string that is not, by the same rules as TOML.
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

}  // namespace ccfs
