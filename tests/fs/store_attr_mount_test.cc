// The kernel asks a read-write mount for a file's attributes again after every READ it sent (it
// marks the atime stale), and a FUSE store marks its own files' atime stale after every read ccfs
// makes of them. The daemon's stat of the store's file asks for no atime, so answering the kernel
// costs no GETATTR at the store while the store's client keeps the attributes: over sshfs or
// GlusterFS that is a network round trip per refresh. The store here is bench/delay_fs, which
// counts the attribute requests it answers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "fs/delay_store.h"
#include "fs/fs_test_util.h"
#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class StoreAttrMountTest : public MountTest {
 protected:
  // delay_fs over the dataset directory, its source a sibling holding `bytes` as the file f.
  void StartStore(const std::string& bytes) {
    source_ = ds_.root() + "/source";
    count_ = ds_.root() + "/getattrs";
    std::filesystem::create_directories(source_);
    WriteWholeFile(source_ + "/f", bytes);
    ASSERT_TRUE(store_.Start(source_, ds_.data(), {"--count-getattrs", count_}))
        << "delay_fs did not mount";
  }
  void TearDown() override {
    MountTest::TearDown();  // ccfs first: it reads the store
    store_.Stop();
  }
  // The attribute requests the store has answered so far.
  long StoreGetattrs() {
    const std::string text = ReadWholeFile(count_);
    return text.empty() ? 0 : std::stol(text);
  }

  std::string source_;
  std::string count_;
  DelayStore store_;
};

TEST_F(StoreAttrMountTest, AnAttributeRefreshAfterAReadDoesNotAskTheStore) {
  constexpr size_t kPage = 8192;
  constexpr int kReads = 40;
  const std::string bytes = CompressibleBytes(kReads * kPage, 5);
  ASSERT_NO_FATAL_FAILURE(StartStore(bytes));
  // Large timeouts at both levels (delay_fs keeps attributes libfuse's 1 s), so that within the
  // loop every refresh the kernel asks of ccfs comes from the READ before it, not a timeout.
  ASSERT_NO_FATAL_FAILURE(
      MountOrDie({"-o", "memory=8MiB,compressed_percent=0,readahead=0,attr_timeout=30"}));
  const int fd = open(ds_.MntPath("f").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  void* page = nullptr;
  ASSERT_EQ(posix_memalign(&page, 4096, kPage), 0);
  const long before = StoreGetattrs();
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kReads; ++k) {
    // A page not read before: a miss, which the daemon reads from the store.
    ASSERT_EQ(pread(fd, page, kPage, static_cast<off_t>(k) * kPage), static_cast<ssize_t>(kPage));
    ASSERT_EQ(fstat(fd, &st), 0);  // the kernel asks ccfs: the atime is stale
    EXPECT_EQ(st.st_size, static_cast<off_t>(bytes.size()));
  }
  const long asked = StoreGetattrs() - before;
  free(page);
  close(fd);
  // Within delay_fs's 1 s of kept attributes, none reaches it; past it, one per expiry.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(asked, 2 + static_cast<long>(seconds))
      << kReads << " reads and stats of a file asked the store for its attributes " << asked
      << " times in " << seconds << " s";
}

}  // namespace
}  // namespace ccfs::testing
