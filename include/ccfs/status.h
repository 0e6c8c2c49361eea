// Status: the result of an operation that can fail.
//
// A Status is either OK or carries a code, the errno that caused it (0 if none) and a message
// that names what failed (a path, a config key and line, a trace line). Status is a value type;
// copying it is cheap when OK.
//
// errno becomes a Status in exactly one place per layer: backing/ (FromErrno). A Status becomes an
// errno only in fuse/ (ToErrno). Everything between passes Status along.
#ifndef CCFS_STATUS_H_
#define CCFS_STATUS_H_

#include <string>
#include <utility>

namespace ccfs {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // bad config value, bad CLI argument, bad trace line
    kNotFound,
    kIOError,          // the backing store failed; errno() says how
    kCorruption,       // a compressed blob failed to decompress
    kNotSupported,
    kBusy,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, 0, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, 0, std::move(msg)); }
  static Status IOError(int err, std::string msg) { return Status(Code::kIOError, err, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, 0, std::move(msg)); }
  static Status NotSupported(std::string msg) { return Status(Code::kNotSupported, 0, std::move(msg)); }
  static Status Busy(std::string msg) { return Status(Code::kBusy, 0, std::move(msg)); }
  // Builds an IOError (or NotFound for ENOENT) from errno `err`; `what` names the path/operation.
  static Status FromErrno(int err, const std::string& what);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The errno behind this status, or 0.
  int err() const { return err_; }
  const std::string& message() const { return msg_; }
  // "message: strerror(err)" or just the message.
  std::string ToString() const;
  // The errno a FUSE reply should carry for this status (EIO when no better one is known).
  int ToErrno() const;

 private:
  Status(Code code, int err, std::string msg) : code_(code), err_(err), msg_(std::move(msg)) {}
  Code code_ = Code::kOk;
  int err_ = 0;
  std::string msg_;
};

}  // namespace ccfs

#endif  // CCFS_STATUS_H_
