// A mount with `sftp` refuses what it cannot serve right, before anything is mounted: a mount that
// is not read-only, `auto` over a dataset on no sshfs mount, a server that does not answer. The
// reads themselves are checked against a real sshd by tests/stores/shared_store_test.sh.
#include <string>

#include <gtest/gtest.h>

#include "testing/mount_fixture.h"

namespace ccfs::testing {
namespace {

class SftpMountTest : public MountTest {
 protected:
  // Mounts with `options`, which must fail; returns the daemon's message.
  std::string Refusal(const std::string& options) {
    std::string error;
    EXPECT_FALSE(ds_.Mount({"-o", options}, &error)) << options;
    return error;
  }
};

TEST_F(SftpMountTest, AMountThatIsNotReadOnlyIsRefused) {
  const std::string error = Refusal("sftp=127.0.0.1:/srv");
  EXPECT_NE(error.find("sftp = 127.0.0.1:/srv: needs a read-only mount"), std::string::npos)
      << error;
}

TEST_F(SftpMountTest, AutoOverADatasetOnNoSshfsMountSaysWhatItIsOn) {
  const std::string error = Refusal("ro,sftp=auto");
  EXPECT_NE(error.find("sftp = auto: " + ds_.data()), std::string::npos) << error;
  EXPECT_NE(error.find("not an sshfs one"), std::string::npos) << error;
}

TEST_F(SftpMountTest, AServerThatDoesNotAnswerIsNamed) {
  // Port 1 on the loopback: nothing listens there.
  const std::string error = Refusal("ro,sftp=sftp://127.0.0.1:1/srv");
  EXPECT_NE(error.find("sftp sftp://127.0.0.1:1/srv: connect"), std::string::npos) << error;
}

TEST_F(SftpMountTest, AnSshConfigThatCannotBeReadIsNamed) {
  const std::string error = Refusal("ro,sftp=127.0.0.1:/srv,ssh_config=/no/such/ssh_config");
  EXPECT_NE(error.find("ssh_config = /no/such/ssh_config: not a readable file"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace ccfs::testing
