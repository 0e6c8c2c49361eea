// RaplReader: the processor packages' energy counters, as Linux's powercap class exposes Intel's
// RAPL (and AMD's, through the same driver), for joules per buffer beside CPU µs per buffer.
//
// What is read. Under the powercap root (/sys/class/powercap) each top-level zone
// `intel-rapl:N` whose `name` starts with "package" is one processor package; its `energy_uj` is
// a counter of microjoules that wraps to 0 after `max_energy_range_uj`. Subzones
// (`intel-rapl:N:M`: core, uncore, dram) are parts of a package, or beside it, and are not added
// (that would count the same joules twice); so is `psys` (the whole platform, where a laptop has
// it). `intel-rapl-mmio:N` is a second door to the same package counters: it is used only when no
// `intel-rapl:N` package zone exists. The energy reported is the sum over the packages.
//
// What the figure means. RAPL counts every joule the packages used over the interval, for all
// processes on the machine (and the idle power of the packages): joules per buffer is the
// machine's package energy over the interval divided by the buffers served in it, not ccfs's share
// of it. It is only meaningful on an otherwise quiet machine, or compared between runs on one.
//
// Where there is none: virtual machines and most non-x86 machines have no RAPL zones (Open says
// NotFound); since Linux 5.10 energy_uj is readable only by root (Open says which file and why).
// Callers then show CPU time only, saying so with NoEnergyNote().
//
// Thread-safety: a RaplReader is immutable after Open; Read and JoulesBetween may be called from
// any thread.
#ifndef CCFS_STATS_RAPL_H_
#define CCFS_STATS_RAPL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ccfs/status.h"

namespace ccfs {

inline constexpr char kPowercapRoot[] = "/sys/class/powercap";

// The counters of every domain at one moment, in the order of RaplReader::domains().
struct RaplSample {
  std::vector<uint64_t> energy_uj;
};

class RaplReader {
 public:
  struct Domain {
    std::string dir;            // e.g. /sys/class/powercap/intel-rapl:0
    std::string name;           // e.g. package-0
    uint64_t max_range_uj = 0;  // energy_uj wraps to 0 after this
  };

  // Finds the package domains under `root` and reads each once. NotFound when `root` has none (or
  // does not exist); IOError naming the file when one cannot be read (EACCES: not root), and
  // InvalidArgument naming the file when it does not hold a number.
  static Status Open(const std::string& root, std::unique_ptr<RaplReader>* reader);

  const std::vector<Domain>& domains() const { return domains_; }
  // "package-0 + package-1".
  std::string Describe() const;

  // Reads every domain's counter. Errors as Open's.
  Status Read(RaplSample* sample) const;

  // Joules used between `before` and `after` (taken in that order), summed over the domains. A
  // counter that went backwards wrapped once: it went on from before to max_range_uj, then from 0
  // to its new value. Counters wrap after hours to days at full load, so at most once between
  // samples seconds or minutes apart. REQUIRES: both samples came from this reader.
  double JoulesBetween(const RaplSample& before, const RaplSample& after) const;

  // What a CPU-time-only view says when Open failed with `why`: "no RAPL: CPU time only" (NotFound)
  // or "RAPL unreadable (<why>): CPU time only".
  static std::string NoEnergyNote(const Status& why);

 private:
  explicit RaplReader(std::vector<Domain> domains) : domains_(std::move(domains)) {}
  std::vector<Domain> domains_;
};

}  // namespace ccfs

#endif  // CCFS_STATS_RAPL_H_
