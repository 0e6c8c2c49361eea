// Status: the errno translations of the whole project live here, so every layer agrees on which
// errno a failure turns into and how it is worded.
#include "ccfs/status.h"

#include <cerrno>
#include <cstring>

namespace ccfs {

Status Status::FromErrno(int err, const std::string& what) {
  // ENOENT is the one errno callers routinely branch on (a missing file is not an I/O fault), so it
  // gets its own code; the errno is kept either way so ToErrno() can hand the exact one back.
  if (err == ENOENT) return Status(Code::kNotFound, err, what);
  return Status(Code::kIOError, err, what);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  if (err_ == 0) return msg_;
  std::string out = msg_;
  out += ": ";
  out += std::strerror(err_);
  return out;
}

int Status::ToErrno() const {
  if (ok()) return 0;
  if (err_ != 0) return err_;
  switch (code_) {
    case Code::kInvalidArgument: return EINVAL;
    case Code::kNotFound: return ENOENT;
    case Code::kCorruption: return EIO;
    case Code::kIOError: return EIO;
    case Code::kNotSupported: return ENOTSUP;
    case Code::kBusy: return EBUSY;
    case Code::kOk: return 0;
  }
  return EIO;
}

}  // namespace ccfs
