// A fake powercap tree (what /sys/class/powercap holds where the machine has RAPL) in a temporary
// directory, for the tests of RaplReader and of the commands that show joules per buffer. Removed
// when destroyed.
#ifndef CCFS_TESTS_STATS_FAKE_POWERCAP_H_
#define CCFS_TESTS_STATS_FAKE_POWERCAP_H_

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace ccfs::testing {

class FakePowercap {
 public:
  FakePowercap() {
    std::string tmpl = ::testing::TempDir() + "ccfs-powercap-XXXXXX";
    root_ = mkdtemp(tmpl.data());
  }
  ~FakePowercap() { std::filesystem::remove_all(root_); }

  const std::string& root() const { return root_; }

  // A zone as the kernel lays it out: name, energy_uj, max_energy_range_uj.
  void Zone(const std::string& dir, const std::string& name, uint64_t energy_uj,
            uint64_t max_uj = 262143328850) const {
    std::filesystem::create_directories(root_ + "/" + dir);
    Write(dir + "/name", name + "\n");
    SetEnergy(dir, energy_uj);
    Write(dir + "/max_energy_range_uj", std::to_string(max_uj) + "\n");
  }
  void SetEnergy(const std::string& dir, uint64_t energy_uj) const {
    Write(dir + "/energy_uj", std::to_string(energy_uj) + "\n");
  }
  // Replaces the file atomically, as a reader of sysfs would see a counter change.
  void Write(const std::string& file, const std::string& text) const {
    const std::string path = root_ + "/" + file;
    std::ofstream(path + ".tmp") << text;
    std::filesystem::rename(path + ".tmp", path);
  }

 private:
  std::string root_;
};

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_STATS_FAKE_POWERCAP_H_
