// The inode table without the kernel: Inodes hold no descriptor of their own beyond the cache's
// bound, are opened again by name when borrowed, follow renames made through the mount, answer
// ESTALE for a name that now names another file, and let a removed file's descriptor go.
#include "fuse/inode_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "testing/command.h"

namespace ccfs {
namespace {

class InodeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/var/tmp/ccfs_inode_table.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    std::filesystem::create_directories(dir_ + "/a/b");
    for (int k = 0; k < 20; ++k) testing::WriteWholeFile(Path(k), "file " + std::to_string(k));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(int k) const { return dir_ + "/a/b/f" + std::to_string(k); }

  // Looks a/b/NAME up as the kernel would, one component at a time.
  Inode* LookupPath(InodeTable* t, const std::string& name, int* err = nullptr) {
    struct stat st;
    Inode *a = nullptr, *b = nullptr, *f = nullptr;
    int e = t->Lookup(t->root(), "a", &st, &a);
    if (e == 0) e = t->Lookup(a, "b", &st, &b);
    if (e == 0) e = t->Lookup(b, name.c_str(), &st, &f);
    if (err != nullptr) *err = e;
    return f;
  }

  // What the borrowed descriptor of `i` reads (the file reopened through /proc).
  static std::string ReadThrough(InodeTable* t, Inode* i) {
    InodeFd fd = t->Borrow(i);
    if (!fd) return "errno " + std::to_string(fd.error());
    return testing::ReadWholeFile("/proc/self/fd/" + std::to_string(fd.get()));
  }

  std::string dir_;
};

TEST_F(InodeTableTest, DescriptorsStayWithinTheBoundAndInodesReopenByName) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 4).ok());
  std::vector<Inode*> files;
  for (int k = 0; k < 20; ++k) {
    files.push_back(LookupPath(&t, "f" + std::to_string(k)));
    ASSERT_NE(files.back(), nullptr);
    EXPECT_LE(t.open_descriptors(), 4u);
  }
  for (int k = 0; k < 20; ++k) {
    EXPECT_EQ(ReadThrough(&t, files[k]), "file " + std::to_string(k));
    EXPECT_LE(t.open_descriptors(), 4u);
  }
  // A descriptor lent out stays open beyond the bound, and is closed once given back.
  std::vector<InodeFd> held;
  for (int k = 0; k < 8; ++k) held.push_back(t.Borrow(files[k]));
  EXPECT_GE(t.open_descriptors(), 8u);
  for (const InodeFd& fd : held) EXPECT_TRUE(fd);
  held.clear();
  EXPECT_LE(t.open_descriptors(), 4u);
}

TEST_F(InodeTableTest, ARenameThroughTheMountMovesTheName) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 1).ok());
  Inode* f = LookupPath(&t, "f1");
  Inode* b = nullptr;
  struct stat st;
  ASSERT_EQ(t.Lookup(t.root(), "a", &st, &b), 0);
  ASSERT_EQ(t.Lookup(b, "b", &st, &b), 0);
  ASSERT_EQ(lstat(Path(1).c_str(), &st), 0);
  ASSERT_EQ(rename(Path(1).c_str(), (dir_ + "/moved").c_str()), 0);
  t.Renamed(b, "f1", t.root(), "moved", st);
  LookupPath(&t, "f2");  // evicts f1's descriptor (bound 1)
  EXPECT_EQ(ReadThrough(&t, f), "file 1");
}

TEST_F(InodeTableTest, ANameThatNowNamesAnotherFileIsStale) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 1).ok());
  Inode* f = LookupPath(&t, "f3");
  // Replaced underneath: a new file (a new inode) under the old name.
  testing::WriteWholeFile(Path(3) + ".new", "another file");
  ASSERT_EQ(rename((Path(3) + ".new").c_str(), Path(3).c_str()), 0);
  LookupPath(&t, "f4");  // evicts f3's descriptor
  InodeFd fd = t.Borrow(f);
  EXPECT_FALSE(fd);
  EXPECT_EQ(fd.error(), ESTALE);
  // Removed underneath: the same.
  Inode* g = LookupPath(&t, "f5");
  LookupPath(&t, "f6");
  ASSERT_EQ(unlink(Path(5).c_str()), 0);
  EXPECT_EQ(t.Borrow(g).error(), ESTALE);
  // The kernel looks the name up again and gets the new file.
  Inode* again = LookupPath(&t, "f3");
  EXPECT_NE(again, f);
  EXPECT_EQ(ReadThrough(&t, again), "another file");
}

TEST_F(InodeTableTest, ALastLinkRemovedLetsTheDescriptorGo) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 16).ok());
  Inode* b = nullptr;
  struct stat st;
  ASSERT_EQ(t.Lookup(t.root(), "a", &st, &b), 0);
  ASSERT_EQ(t.Lookup(b, "b", &st, &b), 0);
  Inode* f = LookupPath(&t, "f7");
  ASSERT_NE(f, nullptr);
  {
    InodeFd fd = t.Borrow(f);  // a lookup opens nothing: the first op on the file does, and keeps it
    ASSERT_TRUE(fd);
  }
  const size_t before = t.open_descriptors();
  ASSERT_EQ(lstat(Path(7).c_str(), &st), 0);
  ASSERT_EQ(unlink(Path(7).c_str()), 0);
  t.LinkRemoved(b, "f7", st);
  EXPECT_EQ(t.open_descriptors(), before - 1);
  EXPECT_EQ(t.Borrow(f).error(), ESTALE);
  t.Unref(f, 1);
}

TEST_F(InodeTableTest, ForgottenInodesAreFreedWithTheirParents) {
  InodeTable t;
  std::vector<fuse_ino_t> freed;
  ASSERT_TRUE(t.Open(dir_, 16, [&](fuse_ino_t ino) { freed.push_back(ino); }).ok());
  struct stat st;
  Inode *a = nullptr, *b = nullptr, *f = nullptr;
  ASSERT_EQ(t.Lookup(t.root(), "a", &st, &a), 0);
  ASSERT_EQ(t.Lookup(a, "b", &st, &b), 0);
  ASSERT_EQ(t.Lookup(b, "f8", &st, &f), 0);
  // The kernel forgets the directories first: they stay, named by f's path.
  EXPECT_FALSE(t.Unref(a, 1));
  EXPECT_FALSE(t.Unref(b, 1));
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(ReadThrough(&t, f), "file 8");
  EXPECT_TRUE(t.Unref(f, 1));
  EXPECT_EQ(freed.size(), 3u);
  EXPECT_EQ(t.open_descriptors(), 0u);
}

TEST_F(InodeTableTest, ListingsGiveTheFilesListedAfterOneAndBorrowKnownOpensThem) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 4).ok());
  std::filesystem::create_directories(dir_ + "/a/b/sub");
  testing::WriteWholeFile(Path(7), std::string(5000, 'x'));
  // A listing f0..f9, with a directory between f3 and f4: sizes 6 bytes but f7's 5000.
  std::vector<Inode*> files;
  InodeKey prev{0, 0};
  for (int k = 0; k < 10; ++k) {
    files.push_back(LookupPath(&t, "f" + std::to_string(k)));
    ASSERT_NE(files.back(), nullptr);
    t.NoteListed(prev, files.back(), k == 7 ? 5000 : 6);
    prev = KeyOf(*files.back());
    if (k == 3) {
      Inode* sub = LookupPath(&t, "sub");
      ASSERT_NE(sub, nullptr);
      t.NoteListed(prev, sub, 4096);
      prev = KeyOf(*sub);
    }
  }
  EXPECT_EQ(t.NextOf(files[0])[kListedOrder], KeyOf(*files[1]));
  EXPECT_EQ(t.NextOf(files[9])[kListedOrder].second, 0u);
  EXPECT_EQ(t.NextOf(files[0])[kNameOrder].second, 0u);  // no order by name recorded yet
  // The files after `i`.
  auto listed_after = [&t](Inode* i, ListingOrder order, size_t max_files, uint64_t max_bytes) {
    return t.ListedFrom(t.NextOf(i)[order], order, max_files, 100, max_bytes);
  };
  // Regular files only, none larger than max_size, at most max_files of them.
  std::vector<InodeTable::ListedFile> after = listed_after(files[2], kListedOrder, 4, 1 << 20);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[0].key, KeyOf(*files[3]));
  EXPECT_EQ(after[1].key, KeyOf(*files[4]));  // the directory passed over
  EXPECT_EQ(after[2].key, KeyOf(*files[5]));
  EXPECT_EQ(after[3].key, KeyOf(*files[6]));
  EXPECT_EQ(after[0].file_id, files[3]->file_id);
  after = listed_after(files[5], kListedOrder, 8, 1 << 20);
  ASSERT_EQ(after.size(), 3u);  // f6, f8, f9: f7 is larger than 100 bytes
  EXPECT_EQ(after[1].key, KeyOf(*files[8]));
  // Together at most max_bytes (the first always).
  EXPECT_EQ(listed_after(files[0], kListedOrder, 8, 13).size(), 2u);
  EXPECT_EQ(listed_after(files[0], kListedOrder, 8, 1).size(), 1u);
  // From a file on, that file first; from a directory on, the files after it.
  after = t.ListedFrom(KeyOf(*files[3]), kListedOrder, 2, 100, 1 << 20);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].key, KeyOf(*files[3]));
  EXPECT_EQ(after[1].key, KeyOf(*files[4]));
  after = t.ListedFrom(KeyOf(*LookupPath(&t, "sub")), kListedOrder, 1, 100, 1 << 20);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].key, KeyOf(*files[4]));
  // The order by name is a chain of its own.
  t.NoteNameOrder({KeyOf(*files[9]), KeyOf(*files[1]), KeyOf(*files[5])});
  EXPECT_EQ(t.NextOf(files[9])[kNameOrder], KeyOf(*files[1]));
  EXPECT_EQ(t.NextOf(files[5])[kNameOrder].second, 0u);
  after = listed_after(files[9], kNameOrder, 8, 1 << 20);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].key, KeyOf(*files[1]));
  EXPECT_EQ(after[1].key, KeyOf(*files[5]));
  EXPECT_EQ(t.NextOf(files[9])[kListedOrder].second, 0u);  // the listed order unchanged
  // BorrowKnown opens a file by its key alone, with its Inode, and gives the signature its
  // identity check read; a descriptor open already gives none.
  Inode* found = nullptr;
  std::optional<FileSignature> opened;
  InodeFd fd = t.BorrowKnown(KeyOf(*files[8]), &found, S_IFREG, &opened);
  ASSERT_TRUE(fd);
  EXPECT_EQ(found, files[8]);
  EXPECT_EQ(testing::ReadWholeFile("/proc/self/fd/" + std::to_string(fd.get())), "file 8");
  struct stat st;
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(*opened, SignatureOf(st));
  EXPECT_EQ(opened->size, 6u);
  std::optional<FileSignature> again;
  EXPECT_TRUE(t.BorrowKnown(KeyOf(*files[8]), &found, S_IFREG, &again));
  EXPECT_FALSE(again.has_value());
  EXPECT_FALSE(t.BorrowKnown(InodeKey{files[8]->dev, 1}, &found));
  // A listing is known no further than the Inodes the table still has.
  EXPECT_TRUE(t.Unref(files[4], 1));
  EXPECT_EQ(listed_after(files[2], kListedOrder, 8, 1 << 20).size(), 1u);  // f3; f4 is forgotten
  // A listing that comes back to where it began (renames between listings) is followed once.
  t.NoteListed(KeyOf(*files[6]), files[5], 6);
  after = t.ListedFrom(KeyOf(*files[5]), kListedOrder, 20, 100, 1 << 20);
  ASSERT_EQ(after.size(), 2u);  // f5, f6
}

TEST_F(InodeTableTest, AWalkGoesIntoKnownListingsAndOnPastTheirEnds) {
  InodeTable t;
  ASSERT_TRUE(t.Open(dir_, 64).ok());
  // a: b (f0, f1, sub (s0, s1), f2), x (never listed), c (g0, g1), each listing in that order.
  for (const char* d : {"a/b/sub", "a/x", "a/c"}) std::filesystem::create_directories(dir_ + "/" + d);
  for (const char* f : {"a/b/sub/s0", "a/b/sub/s1", "a/c/g0", "a/c/g1", "a/x/y"}) {
    testing::WriteWholeFile(dir_ + "/" + f, "bytes");
  }
  auto look = [&t](Inode* parent, const char* name) {
    struct stat st;
    Inode* found = nullptr;
    EXPECT_EQ(t.Lookup(parent, name, &st, &found), 0) << name;
    return found;
  };
  // Lists `names` under `dir` as a READDIRPLUS from its start does: the Inodes, in that order.
  auto list = [&](Inode* dir, std::vector<const char*> names) {
    std::vector<Inode*> out;
    InodeKey prev{0, 0};
    for (const char* name : names) {
      out.push_back(look(dir, name));
      t.NoteListed(prev, out.back(), 5);
      prev = KeyOf(*out.back());
    }
    t.NoteListingFirsts(dir, {KeyOf(*out.front()), InodeKey{}});
    return out;
  };
  Inode* a = look(t.root(), "a");
  const std::vector<Inode*> in_a = list(a, {"b", "x", "c"});
  const std::vector<Inode*> in_b = list(in_a[0], {"f0", "f1", "sub", "f2"});
  const std::vector<Inode*> in_sub = list(in_b[2], {"s0", "s1"});
  const std::vector<Inode*> in_c = list(in_a[2], {"g0", "g1"});
  auto next_file = [&t](Inode* i) {
    InodeKey parent;
    return t.NextFilesOf(i, &parent)[kListedOrder];
  };
  EXPECT_EQ(next_file(in_b[0]), KeyOf(*in_b[1]));
  EXPECT_EQ(next_file(in_b[1]), KeyOf(*in_sub[0]));  // into sub's listing
  EXPECT_EQ(next_file(in_sub[1]), KeyOf(*in_b[3]));  // out of it, on after it in b's
  // Out of b, past x (its listing is not known) into c's.
  EXPECT_EQ(next_file(in_b[3]), KeyOf(*in_c[0]));
  EXPECT_EQ(next_file(in_c[1]).second, 0u);  // the end of the tree listed
  InodeKey parent;
  t.NextFilesOf(in_sub[0], &parent);
  EXPECT_EQ(parent, KeyOf(*in_b[2]));
  // The prefetch goes the same way.
  std::vector<InodeKey> want;
  for (Inode* i : {in_b[0], in_b[1], in_sub[0], in_sub[1], in_b[3], in_c[0], in_c[1]}) {
    want.push_back(KeyOf(*i));
  }
  std::vector<InodeKey> got;
  for (const InodeTable::ListedFile& f : t.ListedFrom(KeyOf(*in_b[0]), kListedOrder, 16, 100, 1 << 20)) {
    got.push_back(f.key);
  }
  EXPECT_EQ(got, want);
  // The directories after one stay within its listing.
  EXPECT_EQ(t.ListedDirsFrom(KeyOf(*in_b[0]), kListedOrder, 4, 64),
            std::vector<InodeKey>{KeyOf(*in_b[2])});
}

}  // namespace
}  // namespace ccfs
