#include "ccfs/status.h"

#include <cerrno>
#include <cstring>

#include <gtest/gtest.h>

namespace ccfs {
namespace {

TEST(StatusTest, MissingFileBecomesNotFoundAndKeepsTheErrno) {
  Status s = Status::FromErrno(ENOENT, "/data/a.bin: open");
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.err(), ENOENT);
  EXPECT_EQ(s.ToErrno(), ENOENT);
  EXPECT_EQ(s.ToString(), std::string("/data/a.bin: open: ") + std::strerror(ENOENT));
}

TEST(StatusTest, OtherErrnosBecomeIOErrorThatFuseRepliesWithVerbatim) {
  for (int err : {EIO, EACCES, ENOSPC, EBADF, EROFS}) {
    Status s = Status::FromErrno(err, "x");
    EXPECT_EQ(s.code(), Status::Code::kIOError) << err;
    EXPECT_EQ(s.ToErrno(), err);
    EXPECT_FALSE(s.ok());
  }
}

TEST(StatusTest, CodesWithoutErrnoMapToTheirConventionalErrno) {
  EXPECT_EQ(Status::InvalidArgument("k").ToErrno(), EINVAL);
  EXPECT_EQ(Status::NotFound("k").ToErrno(), ENOENT);
  EXPECT_EQ(Status::Corruption("k").ToErrno(), EIO);
  EXPECT_EQ(Status::NotSupported("k").ToErrno(), ENOTSUP);
  EXPECT_EQ(Status::Busy("k").ToErrno(), EBUSY);
  EXPECT_EQ(Status::Ok().ToErrno(), 0);
}

TEST(StatusTest, ToStringWithoutErrnoIsJustTheMessage) {
  EXPECT_EQ(Status::InvalidArgument("memory = 1x: not a size").ToString(),
            "memory = 1x: not a size");
  EXPECT_EQ(Status::Ok().ToString(), "OK");
}

}  // namespace
}  // namespace ccfs
