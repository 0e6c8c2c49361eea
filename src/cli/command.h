// Subcommands of the `ccfs` binary.
//
// Each subcommand lives in its own file in src/cli/ and registers itself with a static
// CommandRegistrar:
//
//   static CommandRegistrar reg("stat", "live view of a mount", [](CLI::App* app) {
//     auto opts = std::make_shared<StatArgs>();
//     app->add_option("mountpoint", opts->mountpoint)->required();
//     return [opts] { return RunStat(*opts); };   // the exit code
//   });
//
// main.cc parses the command line and runs the one subcommand that was given.
#ifndef CCFS_CLI_COMMAND_H_
#define CCFS_CLI_COMMAND_H_

#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace ccfs {

// The project version (CMake's project(VERSION)), as `ccfs --version` and the man pages show it.
inline constexpr const char* kVersion = CCFS_VERSION;
// What ccfs is, in one line: the --help banner and the man page's NAME.
inline constexpr const char* kProgramSummary =
    "a FUSE file system that caches a dataset in RAM split into a raw tier and a compressed tier "
    "(lz4/zstd), and measures whether compression pays";

// Defaults that more than one subcommand takes, so that one flag means one thing everywhere.
//
// The access law of replay, advise and model: Pareto 80/20, the skewed workload a cache is for
// (`ccfs replay` and `ccfs advise` default to it, and `ccfs model` must predict what they run).
inline constexpr const char* kDefaultDist = "pareto";
// The FUSE round trip assumed by advise and model unless --trip-us is given: the null-FUSE round
// trip bench/fuse_rtt measures unpinned on a small VM (docs/MEASUREMENTS.md, "The benchmark
// suite", holds the figure). Runs through a mount measure more (replay's costs_us.trip): the
// reader's request also waits for a CPU the daemon's threads share.
inline constexpr double kAssumedTripUs = 18.0;
// The page size flags show as their default where the config's is not read (mkdata, model).
inline constexpr const char* kDefaultPageSize = "8KiB";

// Adds the subcommand's options to `app` and returns what runs it (returning the exit code).
using CommandSetup = std::function<std::function<int()>(CLI::App* app)>;

struct CommandEntry {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandEntry>& CommandRegistry();

// Keeps the registry in the order of the names, which --help and the man page list: the order the
// command files' static registrars run in is the linker's.
struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, CommandSetup setup) {
    std::vector<CommandEntry>& r = CommandRegistry();
    auto at =
        std::find_if(r.begin(), r.end(), [&](const CommandEntry& e) { return e.name > name; });
    r.insert(at, {std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace ccfs

#endif  // CCFS_CLI_COMMAND_H_
