// RaplReader on fake powercap trees: which zones are packages, the sum over packages, the
// wrap-around, and what it says when there is nothing (or nothing readable) to read.
#include "stats/rapl.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "stats/fake_powercap.h"

namespace ccfs {
namespace {

namespace fs = std::filesystem;
using testing::FakePowercap;

TEST(RaplReaderTest, SumsThePackagesAndNotTheirSubzonesNorPsys) {
  FakePowercap p;
  p.Zone("intel-rapl:0", "package-0", 1000000);
  p.Zone("intel-rapl:0:0", "core", 500000);  // inside package-0
  p.Zone("intel-rapl:0:1", "dram", 300000);  // beside it
  p.Zone("intel-rapl:1", "package-1", 2000000);
  p.Zone("intel-rapl:1:0", "core", 700000);
  p.Zone("intel-rapl:2", "psys", 9000000);  // the whole platform
  p.Zone("intel-rapl-mmio:0", "package-0", 1000000);  // package-0 again, another door
  fs::create_directories(p.root() + "/intel-rapl");  // the control type: no counter
  p.Write("intel-rapl/enabled", "1\n");

  std::unique_ptr<RaplReader> r;
  Status s = RaplReader::Open(p.root(), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(r->domains().size(), 2u);
  EXPECT_EQ(r->Describe(), "package-0 + package-1");

  RaplSample before, after;
  ASSERT_TRUE(r->Read(&before).ok());
  p.SetEnergy("intel-rapl:0", 3000000);     // +2 J
  p.SetEnergy("intel-rapl:0:0", 1500000);   // subzones move too, and must not count
  p.SetEnergy("intel-rapl:1", 2500000);     // +0.5 J
  p.SetEnergy("intel-rapl:2", 19000000);
  p.SetEnergy("intel-rapl-mmio:0", 3000000);
  ASSERT_TRUE(r->Read(&after).ok());
  EXPECT_DOUBLE_EQ(r->JoulesBetween(before, after), 2.5);
}

TEST(RaplReaderTest, ACounterThatWrappedWentOnFromItsMaximum) {
  FakePowercap p;
  p.Zone("intel-rapl:0", "package-0", 999000000, 1000000000);  // 1 J below the top
  std::unique_ptr<RaplReader> r;
  ASSERT_TRUE(RaplReader::Open(p.root(), &r).ok());
  RaplSample before, after;
  ASSERT_TRUE(r->Read(&before).ok());
  p.SetEnergy("intel-rapl:0", 2000000);  // wrapped, then 2 J more
  ASSERT_TRUE(r->Read(&after).ok());
  EXPECT_DOUBLE_EQ(r->JoulesBetween(before, after), 3.0);
}

TEST(RaplReaderTest, UsesTheMmioDoorOnlyWhenThereIsNoOther) {
  FakePowercap p;
  p.Zone("intel-rapl-mmio:0", "package-0", 10);
  p.Zone("intel-rapl-mmio:0:0", "core", 10);
  std::unique_ptr<RaplReader> r;
  ASSERT_TRUE(RaplReader::Open(p.root(), &r).ok());
  ASSERT_EQ(r->domains().size(), 1u);
  EXPECT_EQ(r->domains()[0].dir, p.root() + "/intel-rapl-mmio:0");
}

TEST(RaplReaderTest, NoPackageZoneIsUnavailable) {
  FakePowercap p;
  std::unique_ptr<RaplReader> r;
  Status s = RaplReader::Open(p.root(), &r);  // empty root
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(RaplReader::NoEnergyNote(s), "no RAPL: CPU time only");

  p.Zone("intel-rapl:0", "psys", 10);  // zones, but none a package
  s = RaplReader::Open(p.root(), &r);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();

  s = RaplReader::Open(p.root() + "/absent", &r);  // as on this VM: no /sys/class/powercap
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(p.root() + "/absent"), std::string::npos) << s.message();
}

TEST(RaplReaderTest, AnUnreadableCounterIsAClearErrorNamingTheFile) {
  FakePowercap p;
  p.Zone("intel-rapl:0", "package-0", 10);
  const std::string counter = p.root() + "/intel-rapl:0/energy_uj";
  fs::remove(counter);
  fs::create_symlink(p.root() + "/nowhere", counter);  // reading it fails (ENOENT)
  std::unique_ptr<RaplReader> r;
  Status s = RaplReader::Open(p.root(), &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.code(), Status::Code::kNotFound) << "a broken zone is not \"no RAPL\"";
  EXPECT_NE(s.message().find(counter), std::string::npos) << s.message();
  EXPECT_EQ(RaplReader::NoEnergyNote(s).rfind("RAPL unreadable (" + counter, 0), 0u)
      << RaplReader::NoEnergyNote(s);

  // Not root: the permission the kernel gives energy_uj since 5.10 (root bypasses it).
  if (geteuid() != 0) {
    fs::remove(counter);
    p.SetEnergy("intel-rapl:0", 10);
    fs::permissions(counter, fs::perms::owner_read, fs::perm_options::remove);
    s = RaplReader::Open(p.root(), &r);
    EXPECT_NE(s.message().find("readable only by root"), std::string::npos) << s.message();
  }
}

TEST(RaplReaderTest, ACounterThatIsNotANumberIsRefusedNamingTheFile) {
  FakePowercap p;
  p.Zone("intel-rapl:0", "package-0", 10);
  p.Write("intel-rapl:0/energy_uj", "lots\n");
  std::unique_ptr<RaplReader> r;
  Status s = RaplReader::Open(p.root(), &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("intel-rapl:0/energy_uj"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("\"lots\""), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ccfs
