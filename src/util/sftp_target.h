// Where a dataset's files are on an SSH server, as the `sftp` key names it (backing/sftp_store.h
// reads them there): parsed from a URL or sshfs's HOST:PATH, or found from the sshfs mount that
// holds the dataset.
//
// Thread-safety: plain functions and a value type.
#ifndef CCFS_UTIL_SFTP_TARGET_H_
#define CCFS_UTIL_SFTP_TARGET_H_

#include <string>

#include "ccfs/status.h"

namespace ccfs {

// Where the dataset's files are on an SSH server.
struct SftpTarget {
  std::string user;  // "" = the ssh configuration's or the daemon's user
  std::string host;  // a name, an address, or a Host of the ssh configuration
  int port = 0;      // 0 = the ssh configuration's or 22
  // The dataset's directory on the server; relative paths are relative to the login directory
  // ("" = the login directory itself), as sshfs has them.
  std::string path;
  // An OpenSSH client configuration file read for `host` (HostName, Port, User, IdentityFile,
  // UserKnownHostsFile, ...); "" = ~/.ssh/config and /etc/ssh/ssh_config.
  std::string ssh_config;

  std::string ToString() const;  // sftp://[user@]host[:port]/path, for messages
};

// Parses `sftp://[user@]host[:port][/path]` (the path absolute) or sshfs's `[user@]host:[path]`.
// Errors name the text.
Status ParseSftpTarget(const std::string& text, SftpTarget* target);

// The target of the sshfs mount holding `dataset` (an absolute, resolved path), from the mount's
// source in `mounts` (the text of /proc/mounts): its [user@]host:path, with the dataset's place
// under the mount point added to the path. Errors say what the mount is when it is not sshfs or
// its source names no server (sshfs -o fsname=...).
Status SftpTargetOfMount(const std::string& dataset, const std::string& mounts,
                         SftpTarget* target);

}  // namespace ccfs

#endif  // CCFS_UTIL_SFTP_TARGET_H_
