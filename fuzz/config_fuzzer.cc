// libFuzzer target: the config parsers (TOML text, -o lists, single key=value).
//
// Input layout: the first byte picks the entry point, the rest is its text. Properties checked
// beyond "no crash, no sanitizer report":
//   - a parse that fails leaves *options exactly as it was (config.h promises this);
//   - a parse that succeeds leaves options that Validate() accepts, and RenderConfig of them parses
//     back to the same Options (the round trip `ccfs` relies on for --config files it writes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ccfs/config.h"
#include "ccfs/options.h"

namespace {

void Check(bool cond) {
  if (!cond) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 4;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  ccfs::Options options;  // defaults
  const ccfs::Options before = options;
  ccfs::Status s;
  switch (mode) {
    case 0:
      s = ccfs::ParseConfigText(text, "fuzz.toml", &options);
      break;
    case 1: {
      std::vector<std::string> passthrough;
      s = ccfs::ApplyOptionList(text, "-o", &options, &passthrough);
      if (!s.ok()) Check(passthrough.empty());
      break;
    }
    case 2:
      s = ccfs::ApplyOptionList(text, "-o", &options, nullptr);
      break;
    case 3: {
      size_t eq = text.find('=');
      if (eq == std::string::npos) return 0;
      s = ccfs::ApplyKeyValue(text.substr(0, eq), text.substr(eq + 1), "control", &options);
      break;
    }
  }
  if (!s.ok()) {
    Check(options == before);
    Check(!s.message().empty());
    return 0;
  }
  Check(options.Validate().ok());
  ccfs::Options again;
  ccfs::Status r = ccfs::ParseConfigText(ccfs::RenderConfig(options), "rendered", &again);
  Check(r.ok());
  Check(again == options);
  // Sizes: whatever ParseSize accepts formats to text it accepts back to the same value.
  uint64_t bytes = 0;
  if (ccfs::ParseSize(text, &bytes).ok()) {
    uint64_t back = 0;
    Check(ccfs::ParseSize(ccfs::FormatSize(bytes), &back).ok());
  }
  return 0;
}
