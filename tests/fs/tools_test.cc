// Real tools on a mount: git, rsync and a PostgreSQL cluster (initdb, server, SQL, checkpoint),
// with a cache budget far below what they touch, so pages move through both tiers. Each tool's
// result is checked against DATASET directly.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class ToolsOnMountTest : public MountTest {
 protected:
  void SetUp() override { MountOrDie({"-o", "memory=2MiB,compressed_percent=50,allow_other"}); }
};

TEST_F(ToolsOnMountTest, GitCommitAndLogWork) {
  std::string repo = ds_.MntPath("repo");
  CommandResult r = RunCommand(
      {"sh", "-c",
       "set -e; git init -q " + repo + "; cd " + repo +
           "; for i in $(seq 1 50); do seq $i 5000 > f$i.txt; done; git add -A;"
           " git -c user.name=t -c user.email=t@t commit -qm one; seq 1 10 >> f1.txt;"
           " git -c user.name=t -c user.email=t@t commit -qam two; git fsck --strict 2>&1;"
           " git log --oneline | wc -l"},
      120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2\n"), std::string::npos) << r.output;
  // The same repository read straight from DATASET is intact.
  CommandResult direct = RunCommand({"git", "-C", ds_.DataPath("repo"), "fsck", "--strict"}, 60);
  EXPECT_EQ(direct.exit_code, 0) << direct.output;
}

TEST_F(ToolsOnMountTest, RsyncIntoAndOutOfTheMount) {
  if (access("/usr/bin/rsync", X_OK) != 0) GTEST_SKIP() << "rsync is not installed";
  std::string src = ds_.root() + "/src";
  CommandResult r = RunCommand(
      {"sh", "-c",
       "set -e; mkdir -p " + src + "/a/b; for i in $(seq 1 30); do head -c $((i * 7919)) "
       "/dev/urandom > " + src + "/a/r$i; seq 1 $((i * 999)) > " + src + "/a/b/s$i; done;"
       " rsync -a " + src + "/ " + ds_.MntPath("in") + "/;"
       " rsync -a " + ds_.MntPath("in") + "/ " + ds_.root() + "/out/;"
       " diff -r " + src + " " + ds_.DataPath("in") + "; diff -r " + src + " " + ds_.root() + "/out"},
      120);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(ToolsOnMountTest, PostgresClusterRunsOnTheMount) {
  const std::string bin = "/usr/lib/postgresql/15/bin";
  if (access((bin + "/initdb").c_str(), X_OK) != 0) GTEST_SKIP() << "PostgreSQL 15 is not installed";
  if (getpwnam("postgres") == nullptr) GTEST_SKIP() << "no postgres user";
  // PostgreSQL refuses to run as root: hand it a directory on the mount.
  ASSERT_EQ(chmod(ds_.root().c_str(), 0755), 0);
  ASSERT_EQ(chmod(ds_.data().c_str(), 0777), 0);
  std::string pgdata = ds_.MntPath("pg");
  std::string sock = ds_.root() + "/pgrun";  // socket and logs, writable by postgres
  ASSERT_EQ(mkdir(sock.c_str(), 0777), 0);
  ASSERT_EQ(chmod(sock.c_str(), 0777), 0);
  std::string port = std::to_string(20000 + getpid() % 20000);
  auto as_pg = [&](const std::string& cmd) {
    return RunCommand({"su", "postgres", "-s", "/bin/sh", "-c", cmd}, 180);
  };
  // Whatever fails below, no server is left running on (and holding) the mount.
  struct StopServers {
    std::function<void()> stop;
    ~StopServers() { stop(); }
  } guard{[&] {
    as_pg(bin + "/pg_ctl -w -D " + pgdata + " stop -m immediate > /dev/null 2>&1");
    as_pg(bin + "/pg_ctl -w -D " + ds_.DataPath("pg") + " stop -m immediate > /dev/null 2>&1");
  }};
  CommandResult r = as_pg(bin + "/initdb -D " + pgdata + " > /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = as_pg(bin + "/pg_ctl -w -D " + pgdata + " -o '-k " + sock + " -p " + port +
            " -c listen_addresses=' -l " + sock + "/pg.log start");
  ASSERT_EQ(r.exit_code, 0) << r.output << ReadWholeFile(sock + "/pg.log");
  std::string psql = "psql -X -q -t -A -h " + sock + " -p " + port + " -d postgres -c ";
  r = as_pg(psql +
            "'create table t(id int primary key, v text); insert into t select g, md5(g::text) "
            "from generate_series(1, 50000) g; checkpoint; select count(*), sum(length(v)) from t;'");
  CommandResult stop = as_pg(bin + "/pg_ctl -w -D " + pgdata + " stop -m fast");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("50000|1600000"), std::string::npos) << r.output;
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
  // The cluster, read straight from DATASET, starts and holds the same rows.
  std::string direct = ds_.DataPath("pg");
  r = as_pg(bin + "/pg_ctl -w -D " + direct + " -o '-k " + sock + " -p " + port +
            " -c listen_addresses=' -l " + sock + "/pg2.log start");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  CommandResult check = as_pg(psql + "'select count(*) from t;'");
  as_pg(bin + "/pg_ctl -w -D " + direct + " stop -m fast");
  EXPECT_NE(check.output.find("50000"), std::string::npos) << check.output;
}

}  // namespace
}  // namespace ccfs::testing
