// ReadCgroupMemory on fake cgroup trees: v1 and v2 layouts, "no limit", and a process in none.
#include "util/cgroup_memory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/command.h"

namespace ccfs {
namespace {

void Put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

class CgroupMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(root_); }
  void TearDown() override { std::filesystem::remove_all(root_); }
  const std::string root_ = testing::TempPath("cgroup_memory");
};

TEST_F(CgroupMemoryTest, ReadsAV1MemoryCgroup) {
  Put(root_ + "/memory/ccfs-replay-7/memory.limit_in_bytes", "67108864\n");
  Put(root_ + "/memory/ccfs-replay-7/memory.usage_in_bytes", "50331648\n");
  Put(root_ + "/memory/ccfs-replay-7/memory.stat", "cache 20971520\nrss 29360128\n");
  CgroupMemory m;
  ASSERT_TRUE(ReadCgroupMemory(&m, root_, "5:cpu,cpuacct:/\n4:memory:/ccfs-replay-7\n0::/\n"));
  EXPECT_EQ(m.limit, 64u << 20);
  EXPECT_EQ(m.usage, 48u << 20);
  EXPECT_EQ(m.file, 20u << 20);
}

TEST_F(CgroupMemoryTest, ReadsAV2MemoryCgroup) {
  Put(root_ + "/a/b/memory.max", "134217728\n");
  Put(root_ + "/a/b/memory.current", "1048576\n");
  Put(root_ + "/a/b/memory.stat", "anon 524288\nfile 262144\n");
  CgroupMemory m;
  ASSERT_TRUE(ReadCgroupMemory(&m, root_, "0::/a/b\n"));
  EXPECT_EQ(m.limit, 128u << 20);
  EXPECT_EQ(m.usage, 1u << 20);
  EXPECT_EQ(m.file, 256u << 10);
}

TEST_F(CgroupMemoryTest, AParentsTighterLimitHolds) {
  // v1: the kernel gives the tightest limit of the cgroup and its ancestors in memory.stat.
  Put(root_ + "/memory/outer/inner/memory.limit_in_bytes", "9223372036854771712\n");
  Put(root_ + "/memory/outer/inner/memory.usage_in_bytes", "1048576\n");
  Put(root_ + "/memory/outer/inner/memory.stat",
      "cache 0\nhierarchical_memory_limit 33554432\n");
  CgroupMemory m;
  ASSERT_TRUE(ReadCgroupMemory(&m, root_, "4:memory:/outer/inner\n"));
  EXPECT_EQ(m.limit, 32u << 20);
  // v2: each ancestor's memory.max is read.
  Put(root_ + "/p/memory.max", "268435456\n");
  Put(root_ + "/p/q/memory.max", "max\n");
  Put(root_ + "/p/q/memory.current", "1048576\n");
  ASSERT_TRUE(ReadCgroupMemory(&m, root_, "0::/p/q\n"));
  EXPECT_EQ(m.limit, 256u << 20);
}

TEST_F(CgroupMemoryTest, NoLimitOrNoCgroupIsFalse) {
  Put(root_ + "/memory/memory.limit_in_bytes", "9223372036854771712\n");
  Put(root_ + "/memory/memory.usage_in_bytes", "1\n");
  Put(root_ + "/x/memory.max", "max\n");
  Put(root_ + "/x/memory.current", "1\n");
  CgroupMemory m;
  EXPECT_FALSE(ReadCgroupMemory(&m, root_, "4:memory:/\n"));
  EXPECT_EQ(m.limit, 0u);
  EXPECT_FALSE(ReadCgroupMemory(&m, root_, "0::/x\n"));
  EXPECT_FALSE(ReadCgroupMemory(&m, root_, "0::/missing\n"));
  EXPECT_FALSE(ReadCgroupMemory(&m, root_, "garbage"));
}

}  // namespace
}  // namespace ccfs
