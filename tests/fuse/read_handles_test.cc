// The read handles' cache without the kernel: a handle is found by its Inode and serial, kept
// within its bound, and let go by Forget (all of an Inode's, or only a named one, so that a reader
// retiring the backing file that failed it never drops a fresh one another reader kept meanwhile).
#include "fuse/read_handles.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <memory>

#include "fuse/inode_table.h"

namespace ccfs {
namespace {

// A handle reading /dev/null through a backing file of its own.
std::shared_ptr<FileHandle> NewHandle() {
  auto h = std::make_shared<FileHandle>();
  h->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(h->fd, 0);
  std::unique_ptr<BackingFile> backing;
  EXPECT_TRUE(NewPosixBackingFile(h->fd, &backing, BackingFileOptions()).ok());
  h->backing = std::move(backing);
  return h;
}

TEST(ReadHandlesTest, ForgetLetsGoOfTheInodesHandleSoTheNextReadOpensAnew) {
  ReadHandles handles(4);
  Inode a, b;
  a.serial = 1;
  b.serial = 2;
  std::shared_ptr<FileHandle> ha = handles.Keep(&a, NewHandle());
  std::shared_ptr<FileHandle> hb = handles.Keep(&b, NewHandle());
  EXPECT_EQ(handles.Find(&a), ha);
  EXPECT_TRUE(handles.Forget(&a));
  EXPECT_EQ(handles.Find(&a), nullptr);
  EXPECT_FALSE(handles.Forget(&a));
  EXPECT_EQ(handles.Find(&b), hb) << "another Inode's handle went too";
  EXPECT_EQ(handles.size(), 1u);
  // A reader still holding the forgotten handle keeps it usable: it is its own reference.
  EXPECT_EQ(ha.use_count(), 1);
}

TEST(ReadHandlesTest, ForgetOfANamedHandleLeavesAnotherKeptSince) {
  ReadHandles handles(4);
  Inode a;
  a.serial = 7;
  std::shared_ptr<FileHandle> failed = handles.Keep(&a, NewHandle());
  // Another reader retired it and kept a fresh one before this reader got to it.
  ASSERT_TRUE(handles.Forget(&a, failed->backing.get()));
  std::shared_ptr<FileHandle> fresh = handles.Keep(&a, NewHandle());
  EXPECT_FALSE(handles.Forget(&a, failed->backing.get()));
  EXPECT_EQ(handles.Find(&a), fresh);
  EXPECT_TRUE(handles.Forget(&a, fresh->backing.get()));
  EXPECT_EQ(handles.size(), 0u);
}

TEST(ReadHandlesTest, AReusedInodeNeverFindsTheFormerFilesHandle) {
  ReadHandles handles(2);
  Inode a;
  a.serial = 1;
  handles.Keep(&a, NewHandle());
  a.serial = 2;  // the same address, another file
  EXPECT_EQ(handles.Find(&a), nullptr);
  EXPECT_EQ(handles.size(), 0u);
}

TEST(ReadHandlesTest, TheLeastRecentlyUsedGoesPastTheBound) {
  ReadHandles handles(2);
  Inode a, b, c;
  a.serial = 1;
  b.serial = 2;
  c.serial = 3;
  handles.Keep(&a, NewHandle());
  handles.Keep(&b, NewHandle());
  ASSERT_NE(handles.Find(&a), nullptr);  // a is now the most recently used
  handles.Keep(&c, NewHandle());
  EXPECT_EQ(handles.size(), 2u);
  EXPECT_NE(handles.Find(&a), nullptr);
  EXPECT_EQ(handles.Find(&b), nullptr);
  EXPECT_NE(handles.Find(&c), nullptr);
  EXPECT_EQ(handles.Shed(), 2u);
  EXPECT_EQ(handles.size(), 0u);
}

}  // namespace
}  // namespace ccfs
