#include "cli/plot_script.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

namespace ccfs {

namespace fs = std::filesystem;

std::string FindPlotScript(const std::string& given, const char* env_var, const std::string& name) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv(env_var)) return env;
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = '\0';
    fs::path dir = fs::path(exe).parent_path();
    for (fs::path candidate : {dir / ".." / "scripts" / name, dir / ".." / ".." / "scripts" / name,
                               dir / ".." / "share" / "ccfs" / name}) {
      std::error_code ec;
      if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

int RunPlotScript(const std::string& script, const std::vector<std::string>& args,
                  std::string* command) {
  std::error_code ec;
  const char* python = fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
  *command = fmt::format("{} '{}'", python, script);
  for (const std::string& arg : args) *command += fmt::format(" '{}'", arg);
  return std::system(command->c_str());
}

}  // namespace ccfs
