#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ccfs/backing_store.h"
#include "testing/mount_fixture.h"

namespace ccfs {
namespace {

constexpr size_t kPage = 8192;

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuf = std::unique_ptr<char, AlignedFree>;
AlignedBuf NewPage(size_t len = kPage) {
  return AlignedBuf(static_cast<char*>(std::aligned_alloc(kIoAlignment, len)));
}

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

void WriteFileOrDie(const std::string& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

// A fresh directory under `parent`, removed with everything in it at the end of the test.
class ScopedDir {
 public:
  explicit ScopedDir(const std::string& parent) {
    std::string tmpl = parent + "/ccfs-backing-XXXXXX";
    char* p = mkdtemp(tmpl.data());
    if (p != nullptr) path_ = p;
  }
  ~ScopedDir() {
    if (!path_.empty()) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs on a directory of the real disk (O_DIRECT accepted) and on tmpfs.
class PosixBackingStoreTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScopedDir>(GetParam());
    ASSERT_FALSE(dir_->path().empty()) << "mkdtemp under " << GetParam() << " failed";
    store_ = NewPosixBackingStore(dir_->path());
  }
  std::string Path(const std::string& name) const { return dir_->path() + "/" + name; }

  std::unique_ptr<ScopedDir> dir_;
  std::unique_ptr<BackingStore> store_;
};

TEST_P(PosixBackingStoreTest, PagesReadEqualTheFileIncludingAShortLastPageAndEof) {
  const std::string data = RandomBytes(3 * kPage + 1000, 1);
  WriteFileOrDie(Path("data.bin"), data);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("data.bin", O_RDONLY, 0, &f).ok());

  AlignedBuf buf = NewPage();
  for (uint64_t off = 0; off < data.size(); off += kPage) {
    size_t got = 0;
    Status s = f->ReadPage(off, kPage, buf.get(), &got);
    ASSERT_TRUE(s.ok()) << s.ToString();
    size_t want = std::min<size_t>(kPage, data.size() - off);
    ASSERT_EQ(got, want) << "offset " << off;
    EXPECT_EQ(std::memcmp(buf.get(), data.data() + off, got), 0) << "offset " << off;
  }
  size_t got = 123;
  ASSERT_TRUE(f->ReadPage(4 * kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(got, 0u) << "a read at end of file returns nothing";
  ASSERT_TRUE(f->ReadPage(100 * kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(got, 0u) << "a read past end of file returns nothing";

  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, data.size());
}

TEST_P(PosixBackingStoreTest, WritesGoThroughAndTheNextPageReadSeesThem) {
  WriteFileOrDie(Path("w.bin"), RandomBytes(2 * kPage, 2));
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("w.bin", O_RDWR, 0, &f).ok());
  const std::string patch = "written through, unaligned";
  ASSERT_TRUE(f->Write(kPage - 5, patch.data(), patch.size()).ok());
  const std::string tail = RandomBytes(700, 3);
  ASSERT_TRUE(f->Write(2 * kPage, tail.data(), tail.size()).ok());  // extends the file
  ASSERT_TRUE(f->Sync(false).ok());
  ASSERT_TRUE(f->Sync(true).ok());

  // What a plain reader of the backing file sees is what ReadPage sees.
  std::string on_disk;
  {
    std::ifstream in(Path("w.bin"), std::ios::binary);
    on_disk.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_EQ(on_disk.size(), 2 * kPage + 700);
  EXPECT_EQ(on_disk.substr(kPage - 5, patch.size()), patch);

  AlignedBuf buf = NewPage(2 * kPage);
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, 2 * kPage, buf.get(), &got).ok());
  ASSERT_EQ(got, 2 * kPage);
  EXPECT_EQ(std::string(buf.get(), got), on_disk.substr(0, 2 * kPage));
  ASSERT_TRUE(f->ReadPage(2 * kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), tail);
  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, 2 * kPage + 700);
}

TEST_P(PosixBackingStoreTest, CreatesFilesWithOCreat) {
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("new.bin", O_RDWR | O_CREAT | O_EXCL, 0600, &f).ok());
  ASSERT_TRUE(f->Write(0, "abc", 3).ok());
  struct stat st;
  ASSERT_EQ(stat(Path("new.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 3);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::unique_ptr<BackingFile> again;
  Status s = store_->Open("new.bin", O_RDWR | O_CREAT | O_EXCL, 0600, &again);
  EXPECT_EQ(s.err(), EEXIST);
}

TEST_P(PosixBackingStoreTest, MissingFileIsNotFoundNamingThePath) {
  std::unique_ptr<BackingFile> f;
  Status s = store_->Open("nope/missing.bin", O_RDONLY, 0, &f);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.ToString().find(Path("nope/missing.bin")), std::string::npos) << s.ToString();
}

TEST_P(PosixBackingStoreTest, MisalignedPageReadIsRefusedNamingThePath) {
  WriteFileOrDie(Path("a.bin"), RandomBytes(kPage, 4));
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("a.bin", O_RDONLY, 0, &f).ok());
  AlignedBuf buf = NewPage(2 * kPage);
  size_t got = 0;
  for (auto [off, len, p] : {std::tuple<uint64_t, size_t, char*>{100, kPage, buf.get()},
                             {0, 1000, buf.get()},
                             {0, kPage, buf.get() + 512}}) {
    Status s = f->ReadPage(off, len, p, &got);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find(Path("a.bin")), std::string::npos) << s.message();
  }
}

TEST_P(PosixBackingStoreTest, WriteToReadOnlyFileFailsNamingThePath) {
  WriteFileOrDie(Path("ro.bin"), "x");
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("ro.bin", O_RDONLY, 0, &f).ok());
  Status s = f->Write(0, "y", 1);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_EQ(s.err(), EBADF);
  EXPECT_NE(s.message().find(Path("ro.bin")), std::string::npos) << s.message();
}

TEST_P(PosixBackingStoreTest, ManyThreadsReadTheRightBytes) {
  const std::string data = RandomBytes(64 * kPage, 5);
  WriteFileOrDie(Path("mt.bin"), data);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store_->Open("mt.bin", O_RDONLY, 0, &f).ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      AlignedBuf buf = NewPage();
      std::mt19937 rng(t);
      for (int i = 0; i < 200; ++i) {
        uint64_t off = (rng() % 64) * kPage;
        size_t got = 0;
        if (!f->ReadPage(off, kPage, buf.get(), &got).ok() || got != kPage ||
            std::memcmp(buf.get(), data.data() + off, kPage) != 0) {
          bad++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(DiskAndTmpfs, PosixBackingStoreTest,
                         ::testing::Values("/var/tmp", "/dev/shm"),
                         [](const auto& info) {
                           return std::string(info.param) == "/dev/shm" ? "Tmpfs" : "Disk";
                         });

// Misses must be device reads: page reads on a disk file must not fill the kernel's page cache.
TEST(PosixBackingStoreDirectTest, PageReadsOnDiskBypassThePageCache) {
  ScopedDir dir("/var/tmp");
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.path() + "/cold.bin";
  const std::string data = RandomBytes(32 * kPage, 6);
  WriteFileOrDie(path, data);
  {
    int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    close(fd);
  }
  auto store = NewPosixBackingStore(dir.path());
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("cold.bin", O_RDONLY, 0, &f).ok());
  ASSERT_TRUE(f->direct()) << "ext4 accepts O_DIRECT";
  AlignedBuf buf = NewPage();
  for (uint64_t off = 0; off < data.size(); off += kPage) {
    size_t got = 0;
    ASSERT_TRUE(f->ReadPage(off, kPage, buf.get(), &got).ok());
    ASSERT_EQ(std::memcmp(buf.get(), data.data() + off, kPage), 0);
  }
  EXPECT_TRUE(f->direct()) << "the first direct read succeeded, so the file stays direct";

  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, data.size(), PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED);
  const size_t sys_pages = data.size() / sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> resident(sys_pages);
  ASSERT_EQ(mincore(map, data.size(), resident.data()), 0);
  size_t cached = 0;
  for (unsigned char r : resident) cached += r & 1;
  munmap(map, data.size());
  close(fd);
  EXPECT_EQ(cached, 0u) << "pages read through ReadPage ended up in the kernel page cache";
}

// procfs refuses O_DIRECT at open: the file falls back to buffered reads and says so.
TEST(PosixBackingStoreDirectTest, FileSystemThatRefusesODirectFallsBackToBufferedReads) {
  auto store = NewPosixBackingStore("/proc/self");
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(store->Open("status", O_RDONLY, 0, &f).ok());
  AlignedBuf buf = NewPage();
  size_t got = 0;
  Status s = f->ReadPage(0, kPage, buf.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GT(got, 5u);
  EXPECT_EQ(std::string(buf.get(), 5), "Name:");
  EXPECT_FALSE(f->direct());  // known from the first page read on, which opens the direct one
}

TEST(PosixBackingFileTest, WrapsAnOpenDescriptorAndReadsDirect) {
  ScopedDir dir("/var/tmp");
  const std::string path = dir.path() + "/fd.bin";
  const std::string data = RandomBytes(kPage + 10, 7);
  WriteFileOrDie(path, data);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  EXPECT_TRUE(f->direct());
  AlignedBuf buf = NewPage(2 * kPage);
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, 2 * kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), data);
  // Errors name the descriptor and the file behind it.
  Status s = f->Write(0, "x", 1);
  EXPECT_EQ(s.err(), EBADF);
  EXPECT_NE(s.message().find("fd " + std::to_string(fd)), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  f.reset();
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "the wrapped descriptor is closed with the file";
}

// Descriptors this process has open on `path`.
int DescriptorsOn(const std::string& path) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec) == path) ++n;
  }
  return n;
}

// A read-only O_DIRECT descriptor reads the pages itself: no second descriptor is opened, not even
// for a file whose last page is short (its end is known from the size, not from another read).
TEST(PosixBackingFileTest, ADirectReadOnlyDescriptorIsTheOnlyOneOpened) {
  ScopedDir dir("/var/tmp");
  const std::string path = dir.path() + "/direct.bin";
  const std::string data = RandomBytes(2 * kPage + 100, 8);
  WriteFileOrDie(path, data);
  int fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0) << "ext4 accepts O_DIRECT";
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  EXPECT_TRUE(f->direct());
  AlignedBuf buf = NewPage(4 * kPage);
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, 4 * kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), data);
  ASSERT_TRUE(f->ReadPage(2 * kPage, kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), data.substr(2 * kPage));
  EXPECT_EQ(DescriptorsOn(path), 1);
  EXPECT_TRUE(f->direct());
  f.reset();
  EXPECT_EQ(DescriptorsOn(path), 0);
}

// An ordinary descriptor gets its direct one at the first read, and a short last page costs no
// third descriptor or read.
TEST(PosixBackingFileTest, AnOrdinaryDescriptorOpensOneDirectDescriptorForPageReads) {
  ScopedDir dir("/var/tmp");
  const std::string path = dir.path() + "/plain.bin";
  const std::string data = RandomBytes(kPage + 100, 9);
  WriteFileOrDie(path, data);
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  AlignedBuf buf = NewPage(2 * kPage);
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, 2 * kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), got), data);
  EXPECT_EQ(DescriptorsOn(path), 2);
}

TEST(PosixBackingFileTest, WriteOnlyDescriptorWritesButDoesNotRead) {
  ScopedDir dir("/var/tmp");
  const std::string path = dir.path() + "/wo.bin";
  WriteFileOrDie(path, "");
  ASSERT_EQ(chmod(path.c_str(), 0200), 0);
  int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  EXPECT_FALSE(f->direct());
  ASSERT_TRUE(f->Write(0, "hello", 5).ok());
  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, 5u);
  AlignedBuf buf = NewPage();
  size_t got = 0;
  Status s = f->ReadPage(0, kPage, buf.get(), &got);
  EXPECT_EQ(s.err(), EBADF);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

TEST(PosixBackingFileTest, DescriptorOnFileSystemRefusingODirectReadsBuffered) {
  int fd = open("/proc/self/status", O_RDONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  AlignedBuf buf = NewPage();
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, kPage, buf.get(), &got).ok());
  EXPECT_EQ(std::string(buf.get(), 5), "Name:");
  EXPECT_FALSE(f->direct());
}

// Read system calls this thread has made (/proc/thread-self/io's syscr), less the one reading it.
uint64_t ReadCalls() {
  char text[1024];
  const int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* at = std::strstr(text, "syscr: ");
  return at == nullptr ? 0 : std::strtoull(at + 7, nullptr, 10);
}

// An empty read inside the file's size is asked again a few times (a store may answer reads in
// flight with nothing when its connection drops); then an empty answer is the end of the file, so
// a file whose size says more than it holds (sysfs: 4096) still reads what it holds, and returns.
// A short read that ends where the caller's size says the file ends is the end at once: the file
// is not looked at again, which shows here as no read after the short one.
TEST(PosixBackingFileTest, AFileHoldingLessThanItsSizeSaysEndsWhereItsBytesEnd) {
  const char* path = "/sys/kernel/mm/transparent_hugepage/enabled";
  std::ifstream in(path);
  std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  struct stat st;
  if (want.empty() || stat(path, &st) != 0 || static_cast<size_t>(st.st_size) <= want.size()) {
    GTEST_SKIP() << path << " is missing or its size is not larger than its contents";
  }
  int fd = open(path, O_RDONLY);
  ASSERT_GE(fd, 0);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  AlignedBuf buf = NewPage();
  size_t got = 0;
  const uint64_t base = ReadCalls();
  const uint64_t own = ReadCalls() - base;  // ReadCalls' own read
  uint64_t before = ReadCalls();
  Status s = f->ReadPage(0, kPage, buf.get(), &got);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(std::string(buf.get(), got), want);
  EXPECT_GT(ReadCalls() - before - own, 1u);  // the size sent it back until it read nothing
  char* const bufs[] = {buf.get()};
  before = ReadCalls();
  ASSERT_TRUE(f->ReadPages(0, kPage, bufs, want.size(), &got).ok());
  EXPECT_EQ(ReadCalls() - before - own, 1u);
  EXPECT_EQ(std::string(buf.get(), got), want);
}

TEST(PosixBackingFileTest, BadDescriptorIsAnErrorNotACrash) {
  std::unique_ptr<BackingFile> f;
  Status s = NewPosixBackingFile(987654, &f);
  EXPECT_EQ(s.err(), EBADF);
  EXPECT_NE(s.message().find("fd 987654"), std::string::npos) << s.message();
}

// A dataset on a FUSE file system whose server died (an sshfs killed, a GlusterFS client cut off
// from its bricks; here a ccfs mount killed with -9) answers ENOTCONN. The store says EIO instead:
// ccfs's readers would otherwise be told that ccfs itself is gone. The message keeps the cause.
TEST(PosixBackingStoreMountTest, AStoreThatLostItsConnectionFailsReadsAndWritesWithEio) {
  testing::MountedDataset store;
  const std::string data = RandomBytes(2 * kPage, 11);
  WriteFileOrDie(store.DataPath("f"), data);
  std::string error;
  ASSERT_TRUE(store.Mount({}, &error)) << error;
  int fd = open(store.MntPath("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::unique_ptr<BackingFile> f;
  ASSERT_TRUE(NewPosixBackingFile(fd, &f).ok());
  AlignedBuf buf = NewPage();
  size_t got = 0;
  ASSERT_TRUE(f->ReadPage(0, kPage, buf.get(), &got).ok());
  ASSERT_EQ(std::string(buf.get(), got), data.substr(0, kPage));

  ASSERT_EQ(kill(store.pid(), SIGKILL), 0);
  Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) {  // until the kernel has seen the server go
    s = f->ReadPage(kPage, kPage, buf.get(), &got);
    if (s.ok()) usleep(20000);
  }
  EXPECT_EQ(s.err(), EIO) << s.ToString();
  // The kernel answers ENOTCONN, ECONNABORTED (a request in flight at the abort) or EIO, by timing;
  // whichever, the reader gets EIO and the message names the file.
  EXPECT_NE(s.message().find(store.MntPath("f")), std::string::npos) << s.message();
  s = f->Write(0, "x", 1);
  EXPECT_EQ(s.err(), EIO) << s.ToString();
  f.reset();
  EXPECT_EQ(store.Unmount(), 128 + SIGKILL);
}

}  // namespace
}  // namespace ccfs
