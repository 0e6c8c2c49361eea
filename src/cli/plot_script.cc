#include "cli/plot_script.h"

#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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
  const std::string python = fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
  std::vector<std::string> argv = {python, script};
  argv.insert(argv.end(), args.begin(), args.end());
  // For messages only: the child gets argv as it is, no shell (an argument may hold any quote).
  *command = python;
  for (size_t i = 1; i < argv.size(); ++i) *command += fmt::format(" \"{}\"", argv[i]);
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, raw.data(), environ);
  if (err != 0) {
    *command += fmt::format(": {}", std::strerror(err));
    return 127;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace ccfs
