// The cache file's format and its checks (cache_file.h).
#include "cache/cache_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "ccfs/codec.h"

namespace ccfs::cache {

namespace {

constexpr char kMagic[8] = {'C', 'C', 'F', 'S', 'P', 'A', 'G', 'E'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kRecordHead = 8;   // type, payload length
constexpr size_t kRecordTail = 8;   // checksum
constexpr uint32_t kFileRecord = 1;
constexpr uint32_t kPageRecord = 2;
constexpr uint32_t kEndRecord = 3;
constexpr size_t kFileFixed = 32;   // id, size, mtime, ctime
constexpr size_t kPageFixed = 13;   // page number, length, codec
constexpr size_t kReadChunk = 1 << 20;
constexpr size_t kWriteChunk = 1 << 20;
constexpr uint64_t kDropChunk = 8 << 20;

void Put32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void Put64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t Get32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A path a file record may carry: relative, no empty, "." or ".." component, no NUL.
bool PlainRelativePath(const char* p, size_t n) {
  if (n == 0 || n > kMaxCachePath || p[0] == '/') return false;
  size_t start = 0;
  for (size_t i = 0; i <= n; ++i) {
    if (i < n && p[i] == '\0') return false;
    if (i == n || p[i] == '/') {
      const size_t len = i - start;
      if (len == 0) return false;
      if (len == 1 && p[start] == '.') return false;
      if (len == 2 && p[start] == '.' && p[start + 1] == '.') return false;
      start = i + 1;
    }
  }
  return true;
}

bool KnownCodec(uint8_t codec) {
  for (CodecKind k : AllCodecKinds()) {
    if (codec == static_cast<uint8_t>(k)) return true;
  }
  return false;
}

std::string Header(uint32_t page_size, uint32_t codecs, uint64_t dataset_id, int64_t written) {
  std::string h(kMagic, sizeof(kMagic));
  Put32(&h, kCacheFileVersion);
  Put32(&h, page_size);
  Put32(&h, codecs);
  Put32(&h, 0);
  Put64(&h, dataset_id);
  Put64(&h, static_cast<uint64_t>(written));
  Put64(&h, 0);
  Put64(&h, 0);
  Put64(&h, XXH3_64bits(h.data(), h.size()));
  return h;
}

Status WriteAll(int fd, const char* p, size_t n, uint64_t offset, const std::string& path) {
  while (n > 0) {
    ssize_t w = pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "write " + path);
    }
    if (w == 0) return Status::IOError(ENOSPC, "write " + path + ": no progress");
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return Status::Ok();
}

}  // namespace

uint64_t CacheFileDatasetId(const std::string& dataset) {
  return XXH3_64bits(dataset.data(), dataset.size());
}

// ---- reading -----------------------------------------------------------------------------------

CacheFileReader::CacheFileReader(int fd, uint32_t page_size, uint64_t dataset_id)
    : fd_(fd), page_size_(page_size), dataset_id_(dataset_id) {}

Status CacheFileReader::Damaged(const std::string& what) const {
  return Status::Corruption("at byte " + std::to_string(record_at_) + ": " + what);
}

bool CacheFileReader::Fill(size_t n, Status* error) {
  if (end_ - pos_ >= n) return true;
  // Keep the unread bytes, then read at least a chunk after them.
  if (end_ > pos_) std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  // The file is read once, front to back: its pages leave the page cache behind the reader, so
  // a reload does not hold the mount's memory (the daemon's cgroup) with them.
  if (dropped_ == 0 && offset_ == 0) posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (offset_ - dropped_ >= kDropChunk) {
    posix_fadvise(fd_, static_cast<off_t>(dropped_), static_cast<off_t>(offset_ - dropped_),
                  POSIX_FADV_DONTNEED);
    dropped_ = offset_;
  }
  const size_t want = std::max(n, kReadChunk);
  if (buf_.size() < want) buf_.resize(want);
  while (end_ < n) {
    ssize_t r = pread(fd_, buf_.data() + end_, buf_.size() - end_,
                      static_cast<off_t>(offset_ + end_));
    if (r < 0) {
      if (errno == EINTR) continue;
      *error = Status::FromErrno(errno, "read");
      return false;
    }
    if (r == 0) return false;
    end_ += static_cast<size_t>(r);
  }
  return true;
}

Status CacheFileReader::ReadHeader() {
  Status err;
  record_at_ = 0;
  if (!Fill(kHeaderBytes, &err)) return err.ok() ? Damaged("truncated header") : err;
  const char* h = buf_.data() + pos_;
  if (std::memcmp(h, kMagic, sizeof(kMagic)) != 0) return Damaged("not a ccfs cache file");
  if (Get64(h + 56) != XXH3_64bits(h, 56)) return Damaged("header checksum does not match");
  const uint32_t version = Get32(h + 8);
  if (version != kCacheFileVersion) {
    return Status::NotSupported("version " + std::to_string(version) + ", this ccfs reads " +
                                std::to_string(kCacheFileVersion));
  }
  const uint32_t page_size = Get32(h + 12);
  if (page_size != page_size_) {
    return Status::NotSupported("written with page_size " + std::to_string(page_size) +
                                ", the mount has " + std::to_string(page_size_));
  }
  codecs_ = Get32(h + 16);
  for (uint32_t k = 0; k < 32; ++k) {
    if ((codecs_ >> k & 1) && !KnownCodec(static_cast<uint8_t>(k))) {
      return Status::NotSupported("pages compressed with codec " + std::to_string(k) +
                                  ", unknown to this ccfs");
    }
  }
  if (Get64(h + 24) != dataset_id_) return Status::NotSupported("written for another dataset");
  written_ = static_cast<int64_t>(Get64(h + 32));
  pos_ += kHeaderBytes;
  offset_ += kHeaderBytes;
  return Status::Ok();
}

Status CacheFileReader::Next(Kind* kind) {
  Status err;
  record_at_ = offset_;
  if (ended_) {
    if (Fill(1, &err)) return Damaged("bytes after the end record");
    *kind = Kind::kEnd;
    return err;
  }
  if (!Fill(kRecordHead, &err)) return err.ok() ? Damaged("truncated: no end record") : err;
  const uint32_t type = Get32(buf_.data() + pos_);
  const uint32_t len = Get32(buf_.data() + pos_ + 4);
  // The largest payload each type may have, checked before anything is read or allocated.
  const uint64_t max = type == kFileRecord ? kFileFixed + kMaxCachePath
                       : type == kPageRecord ? kPageFixed + static_cast<uint64_t>(page_size_)
                       : type == kEndRecord  ? 16
                                             : 0;
  if (max == 0) return Damaged("unknown record type " + std::to_string(type));
  if (len > max) return Damaged("record of " + std::to_string(len) + " bytes, too long");
  if (!Fill(kRecordHead + len + kRecordTail, &err)) {
    return err.ok() ? Damaged("truncated record") : err;
  }
  const char* r = buf_.data() + pos_;
  if (Get64(r + kRecordHead + len) != XXH3_64bits(r, kRecordHead + len)) {
    return Damaged("record checksum does not match");
  }
  const char* p = r + kRecordHead;
  if (type == kFileRecord) {
    if (len <= kFileFixed) return Damaged("file record without a path");
    if (!PlainRelativePath(p + kFileFixed, len - kFileFixed)) {
      return Damaged("file record with a path that is not a plain relative path");
    }
    file_.file_id = Get64(p);
    file_.size = Get64(p + 8);
    file_.mtime_ns = static_cast<int64_t>(Get64(p + 16));
    file_.ctime_ns = static_cast<int64_t>(Get64(p + 24));
    file_.path.assign(p + kFileFixed, len - kFileFixed);
    ++files_;
    *kind = Kind::kFile;
  } else if (type == kPageRecord) {
    if (files_ == 0) return Damaged("page record before any file record");
    if (len < kPageFixed) return Damaged("short page record");
    page_.page_no = Get64(p);
    page_.length = Get32(p + 8);
    page_.codec = static_cast<uint8_t>(p[12]);
    const size_t size = len - kPageFixed;
    if (page_.length == 0 || page_.length > page_size_) return Damaged("page length out of range");
    if (page_.page_no > UINT64_MAX / page_size_) return Damaged("page number out of range");
    if (page_.codec == kZeroPage) {
      if (size != 0) return Damaged("zero page with bytes");
    } else if (!KnownCodec(page_.codec) || !(codecs_ >> page_.codec & 1)) {
      return Damaged("page with a codec the header does not list");
    } else if (size == 0 || size >= page_.length) {
      return Damaged("compressed page of " + std::to_string(size) + " bytes for " +
                     std::to_string(page_.length));
    }
    page_.bytes = std::string_view(p + kPageFixed, size);
    ++pages_;
    *kind = Kind::kPage;
  } else {
    if (len != 16) return Damaged("end record of the wrong size");
    if (Get64(p) != files_ || Get64(p + 8) != pages_) {
      return Damaged("end record counts do not match the records");
    }
    ended_ = true;
    *kind = Kind::kEnd;
  }
  const size_t total = kRecordHead + len + kRecordTail;
  pos_ += total;
  offset_ += total;
  return Status::Ok();
}

Status VerifyCacheFile(int fd, uint32_t page_size, uint64_t dataset_id,
                       CacheFileSummary* summary) {
  *summary = CacheFileSummary();
  CacheFileReader reader(fd, page_size, dataset_id);
  Status s = reader.ReadHeader();
  if (!s.ok()) return s;
  summary->written = reader.written();
  for (;;) {
    CacheFileReader::Kind kind;
    s = reader.Next(&kind);
    if (!s.ok()) return s;
    if (kind == CacheFileReader::Kind::kEnd) break;
    if (kind == CacheFileReader::Kind::kFile) {
      ++summary->files;
    } else {
      ++summary->pages;
      summary->page_bytes += reader.page().bytes.size();
    }
  }
  CacheFileReader::Kind kind;
  return reader.Next(&kind);  // nothing may follow the end record
}

// ---- writing -----------------------------------------------------------------------------------

CacheFileWriter::CacheFileWriter(int fd, std::string dir, std::string path, std::string temp,
                                 uint32_t page_size, uint64_t dataset_id)
    : fd_(fd), dir_(std::move(dir)), path_(std::move(path)), temp_(std::move(temp)),
      page_size_(page_size), dataset_id_(dataset_id) {}

Status CacheFileWriter::Create(const std::string& dir, const std::string& name,
                               uint32_t page_size, uint64_t dataset_id,
                               std::unique_ptr<CacheFileWriter>* writer) {
  const std::string path = dir + "/" + name;
  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create " + temp);
  writer->reset(new CacheFileWriter(fd, dir, path, temp, page_size, dataset_id));
  // The header's codecs are known only at the end: Commit writes it again.
  (*writer)->buf_ = Header(page_size, 0, dataset_id, 0);
  return Status::Ok();
}

CacheFileWriter::~CacheFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
}

Status CacheFileWriter::Flush() {
  Status s = WriteAll(fd_, buf_.data(), buf_.size(), offset_, temp_);
  if (!s.ok()) return s;
  offset_ += buf_.size();
  buf_.clear();
  return Status::Ok();
}

Status CacheFileWriter::AddRecord(uint32_t type, const std::string& payload) {
  const size_t start = buf_.size();
  Put32(&buf_, type);
  Put32(&buf_, static_cast<uint32_t>(payload.size()));
  buf_ += payload;
  Put64(&buf_, XXH3_64bits(buf_.data() + start, buf_.size() - start));
  return buf_.size() >= kWriteChunk ? Flush() : Status::Ok();
}

Status CacheFileWriter::AddFile(const CachedFileRecord& file) {
  std::string p;
  Put64(&p, file.file_id);
  Put64(&p, file.size);
  Put64(&p, static_cast<uint64_t>(file.mtime_ns));
  Put64(&p, static_cast<uint64_t>(file.ctime_ns));
  p += file.path;
  ++files_;
  return AddRecord(kFileRecord, p);
}

Status CacheFileWriter::AddPage(uint64_t page_no, uint32_t length, uint8_t codec,
                                const char* bytes, uint32_t size) {
  std::string p;
  p.reserve(kPageFixed + size);
  Put64(&p, page_no);
  Put32(&p, length);
  p.push_back(static_cast<char>(codec));
  p.append(bytes, size);
  if (codec != kZeroPage) codecs_ |= 1u << codec;
  ++pages_;
  return AddRecord(kPageRecord, p);
}

Status CacheFileWriter::Commit() {
  std::string end;
  Put64(&end, files_);
  Put64(&end, pages_);
  Status s = AddRecord(kEndRecord, end);
  if (s.ok()) s = Flush();
  if (!s.ok()) return s;
  const std::string header = Header(page_size_, codecs_, dataset_id_, time(nullptr));
  s = WriteAll(fd_, header.data(), header.size(), 0, temp_);
  if (!s.ok()) return s;
  if (fsync(fd_) != 0) return Status::FromErrno(errno, "fsync " + temp_);
  // Clean now: the pages need not stay in the page cache (the next reader is the next mount).
  posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  if (close(fd_) != 0) {
    fd_ = -1;
    return Status::FromErrno(errno, "close " + temp_);
  }
  fd_ = -1;
  if (rename(temp_.c_str(), path_.c_str()) != 0) return Status::FromErrno(errno, "rename " + temp_);
  committed_ = true;
  // The rename is durable once the directory is.
  int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Status::FromErrno(errno, "open " + dir_);
  const int rc = fsync(dir_fd);
  const int err = errno;
  close(dir_fd);
  if (rc != 0) return Status::FromErrno(err, "fsync " + dir_);
  return Status::Ok();
}

void RemoveStaleCacheTemps(const std::string& dir, const std::string& name) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = name + ".tmp-";
  while (dirent* ent = readdir(d)) {
    const std::string entry = ent->d_name;
    if (entry.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(entry.c_str() + prefix.size(), &end, 10);
    if (end == nullptr || *end != '\0' || pid <= 0) continue;
    // A writer still running (another mount of the same dataset) keeps its file.
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    unlinkat(dirfd(d), entry.c_str(), 0);
  }
  closedir(d);
}

}  // namespace ccfs::cache
