#include "trace/trace_file.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "util/strings.h"

namespace ccfs {

namespace {

constexpr std::string_view kCcfsHeader = "file,offset,length,op";
constexpr std::string_view kFioV2Header = "fio version 2 iolog";
constexpr std::string_view kFioV3Header = "fio version 3 iolog";
constexpr std::string_view kVscsiHeader = "version,time,op,size,lbn";
constexpr uint64_t kSectorBytes = 512;  // a VSCSI trace's lbn counts 512-byte sectors

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Lower case, blanks dropped: how a header line is compared.
std::string CompactHeader(std::string_view line) {
  std::string compact;
  for (char c : line) {
    if (c != ' ' && c != '\t') {
      compact += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return compact;
}

// Walks a text line by line, counting lines from 1; the last line may lack its newline.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    *line = text_.substr(pos_, end - pos_);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  int number() const { return number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int number_ = 0;
};

// Everything a parser needs to word an error and resolve a record.
class Context {
 public:
  Context(const std::string& source, const Dataset& dataset) : source_(source), dataset_(dataset) {}

  template <typename... Args>
  Status Error(int line, fmt::format_string<Args...> format, Args&&... args) const {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source_, line,
                                               fmt::format(format, std::forward<Args>(args)...)));
  }

  // An unsigned decimal field. `what` names it in errors ("offset", "length", ...).
  Status Number(int line, std::string_view field, const char* what, uint64_t* value) const {
    field = Trim(field);
    if (field.empty()) return Error(line, "{} is empty", what);
    if (field.front() == '-') return Error(line, "{} '{}' is negative", what, field);
    if (field.front() == '+') field.remove_prefix(1);
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *value);
    if (ec == std::errc::result_out_of_range) {
      return Error(line, "{} '{}' is too large", what, field);
    }
    if (ec != std::errc() || end != field.data() + field.size()) {
      return Error(line, "{} '{}' is not a whole number", what, field);
    }
    return Status::Ok();
  }

  // Same, accepting a decimal fraction (timestamps, response times); only checks the form.
  Status Decimal(int line, std::string_view field, const char* what) const {
    field = Trim(field);
    if (!field.empty() && field.front() == '-') return Error(line, "{} '{}' is negative", what, field);
    double value;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
      return Error(line, "{} '{}' is not a number", what, field);
    }
    return Status::Ok();
  }

  Status Op(int line, std::string_view field, TraceOp* op) const {
    field = Trim(field);
    if (EqualsIgnoreCase(field, "read")) {
      *op = TraceOp::kRead;
    } else if (EqualsIgnoreCase(field, "write")) {
      *op = TraceOp::kWrite;
    } else {
      return Error(line, "unknown op '{}' (read or write)", field);
    }
    return Status::Ok();
  }

  // Checks offset and length against the file and appends the record.
  Status Add(int line, int file, uint64_t offset, uint64_t length, TraceOp op,
             std::vector<TraceRecord>* records) const {
    if (length == 0) return Error(line, "length is 0 (must be at least 1)");
    if (length > kMaxTraceLength) {
      return Error(line, "length {} is too large (at most {})", length, kMaxTraceLength);
    }
    const Dataset::File& f = dataset_.files()[file];
    if (offset >= f.size) {
      return Error(line, "offset {} is past the end of {} ({} bytes)", offset, f.path, f.size);
    }
    TraceRecord record;
    record.file = static_cast<uint32_t>(file);
    record.offset = offset;
    record.length = static_cast<uint32_t>(length);
    record.op = op;
    records->push_back(record);
    return Status::Ok();
  }

  // A file named by a trace: relative to the root, or absolute; an absolute name from another
  // machine matches by its longest trailing path that is a file of the data set.
  Status ResolveFile(int line, std::string_view name, int* file) const {
    std::string path(name);
    const std::string& root = dataset_.root();
    if (!root.empty() && path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0 &&
        path[root.size()] == '/') {
      path = path.substr(root.size() + 1);
    }
    for (size_t start = 0;;) {
      int found = dataset_.Find(path.substr(start));
      if (found >= 0) {
        *file = found;
        return Status::Ok();
      }
      size_t slash = path.find('/', start + 1);
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    return Error(line, "'{}' is not a file of the data set {}", name, root);
  }

  // A block trace's disk offset, folded onto the data set: its page modulo the page count, the
  // same place within the page when the file holds it; then as Add.
  Status AddFolded(int line, uint64_t disk_offset, uint64_t length, TraceOp op,
                   std::vector<TraceRecord>* records) const {
    const uint64_t page_size = dataset_.page_size();
    Dataset::PageRef ref = dataset_.Locate((disk_offset / page_size) % dataset_.pages());
    uint64_t file_offset = ref.offset + disk_offset % page_size;
    if (file_offset >= dataset_.files()[ref.file].size) file_offset = ref.offset;
    return Add(line, static_cast<int>(ref.file), file_offset, length, op, records);
  }

 private:
  const std::string& source_;
  const Dataset& dataset_;
};

// Splits one CSV line into fields; double quotes protect commas and "" is a quote.
Status SplitCsv(const Context& ctx, int line_number, std::string_view line,
                std::vector<std::string>* fields) {
  fields->clear();
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"' && Trim(field).empty() && !was_quoted) {
      field.clear();
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields->push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else {
      field += c;
    }
  }
  if (quoted) return ctx.Error(line_number, "unterminated quote (truncated line?)");
  fields->push_back(std::move(field));
  return Status::Ok();
}

std::vector<std::string_view> SplitWhitespace(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

Status ParseCcfsCsv(const Context& ctx, std::string_view text, std::vector<TraceRecord>* out) {
  LineReader lines(text);
  std::string_view line;
  bool header_seen = false;
  std::vector<std::string> fields;
  while (lines.Next(&line)) {
    const int n = lines.number();
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!header_seen) {
      if (CompactHeader(trimmed) != kCcfsHeader) {
        return ctx.Error(n, "expected the header '{}', got '{}'", kCcfsHeader, trimmed);
      }
      header_seen = true;
      continue;
    }
    Status s = SplitCsv(ctx, n, line, &fields);
    if (!s.ok()) return s;
    if (fields.size() != 4) {
      return ctx.Error(n, "expected 4 fields (file,offset,length,op), got {}", fields.size());
    }
    int file;
    uint64_t offset, length;
    TraceOp op = TraceOp::kRead;
    if (!(s = ctx.ResolveFile(n, fields[0], &file)).ok()) return s;
    if (!(s = ctx.Number(n, fields[1], "offset", &offset)).ok()) return s;
    if (!(s = ctx.Number(n, fields[2], "length", &length)).ok()) return s;
    if (!(s = ctx.Op(n, fields[3], &op)).ok()) return s;
    if (!(s = ctx.Add(n, file, offset, length, op, out)).ok()) return s;
  }
  if (!header_seen) return ctx.Error(lines.number(), "empty trace: no header '{}'", kCcfsHeader);
  return Status::Ok();
}

Status ParseFio(const Context& ctx, std::string_view text, int version,
                std::vector<TraceRecord>* out) {
  LineReader lines(text);
  std::string_view line;
  bool header_seen = false;
  const std::string_view header = version == 2 ? kFioV2Header : kFioV3Header;
  const size_t skip = version == 3 ? 1 : 0;  // v3 lines start with a timestamp
  const char* form = version == 2 ? "'FILE ACTION' or 'FILE ACTION OFFSET LENGTH'"
                                  : "'TIME FILE ACTION' or 'TIME FILE ACTION OFFSET LENGTH'";
  while (lines.Next(&line)) {
    const int n = lines.number();
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) continue;
    if (!header_seen) {
      if (trimmed != header) return ctx.Error(n, "expected the header '{}', got '{}'", header, trimmed);
      header_seen = true;
      continue;
    }
    std::vector<std::string_view> words = SplitWhitespace(trimmed);
    if (words.size() != skip + 2 && words.size() != skip + 4) {
      return ctx.Error(n, "expected {}, got {} fields", form, words.size());
    }
    Status s;
    if (version == 3) {
      uint64_t ts;
      if (!(s = ctx.Number(n, words[0], "timestamp", &ts)).ok()) return s;
    }
    std::string_view name = words[skip], action = words[skip + 1];
    if (words.size() == skip + 2) {
      if (action == "add" || action == "open" || action == "close") {
        int file;
        if (!(s = ctx.ResolveFile(n, name, &file)).ok()) return s;
        continue;
      }
      if (action == "sync" || action == "datasync") continue;
      return ctx.Error(n, "unknown file action '{}' (add, open, close, sync, datasync)", action);
    }
    uint64_t offset, length;
    if (!(s = ctx.Number(n, words[skip + 2], "offset", &offset)).ok()) return s;
    if (!(s = ctx.Number(n, words[skip + 3], "length", &length)).ok()) return s;
    if (action == "wait") {
      if (version == 3) return ctx.Error(n, "action 'wait' is not allowed in a version 3 iolog");
      continue;
    }
    if (action == "sync" || action == "datasync" || action == "trim") continue;
    TraceOp op = TraceOp::kRead;
    if (action == "read") {
      op = TraceOp::kRead;
    } else if (action == "write") {
      op = TraceOp::kWrite;
    } else {
      return ctx.Error(n, "unknown action '{}' (read, write, sync, datasync, trim, wait)", action);
    }
    int file;
    if (!(s = ctx.ResolveFile(n, name, &file)).ok()) return s;
    if (!(s = ctx.Add(n, file, offset, length, op, out)).ok()) return s;
  }
  if (!header_seen) return ctx.Error(lines.number(), "empty trace: no header '{}'", header);
  return Status::Ok();
}

Status ParseMsr(const Context& ctx, std::string_view text, std::vector<TraceRecord>* out) {
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string> fields;
  bool first = true;
  while (lines.Next(&line)) {
    const int n = lines.number();
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) continue;
    if (first && EqualsIgnoreCase(trimmed.substr(0, 9), "timestamp")) {  // an optional header
      first = false;
      continue;
    }
    first = false;
    Status s = SplitCsv(ctx, n, trimmed, &fields);
    if (!s.ok()) return s;
    if (fields.size() != 7) {
      return ctx.Error(n, "expected 7 fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,"
                          "ResponseTime), got {}", fields.size());
    }
    uint64_t timestamp, disk, offset, size;
    TraceOp op = TraceOp::kRead;
    if (!(s = ctx.Number(n, fields[0], "Timestamp", &timestamp)).ok()) return s;
    if (Trim(fields[1]).empty()) return ctx.Error(n, "Hostname is empty");
    if (!(s = ctx.Number(n, fields[2], "DiskNumber", &disk)).ok()) return s;
    if (!(s = ctx.Op(n, fields[3], &op)).ok()) return s;
    if (!(s = ctx.Number(n, fields[4], "Offset", &offset)).ok()) return s;
    if (!(s = ctx.Number(n, fields[5], "Size", &size)).ok()) return s;
    if (!(s = ctx.Decimal(n, fields[6], "ResponseTime")).ok()) return s;
    if (size == 0) return ctx.Error(n, "Size is 0 (must be at least 1)");
    if (!(s = ctx.AddFolded(n, offset, size, op, out)).ok()) return s;
  }
  return Status::Ok();
}

Status ParseVscsi(const Context& ctx, std::string_view text, std::vector<TraceRecord>* out) {
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string> fields;
  bool header_seen = false;
  while (lines.Next(&line)) {
    const int n = lines.number();
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!header_seen) {
      if (CompactHeader(trimmed) != kVscsiHeader) {
        return ctx.Error(n, "expected the header '{}'", kVscsiHeader);
      }
      header_seen = true;
      continue;
    }
    Status s = SplitCsv(ctx, n, trimmed, &fields);
    if (!s.ok()) return s;
    if (fields.size() != 5) {
      return ctx.Error(n, "expected 5 fields ({}), got {}", kVscsiHeader, fields.size());
    }
    uint64_t version, time, size, lbn;
    if (!(s = ctx.Number(n, fields[0], "version", &version)).ok()) return s;
    if (!(s = ctx.Number(n, fields[1], "time", &time)).ok()) return s;
    const std::string_view code = Trim(fields[2]);
    unsigned opcode = 0;
    auto [end, ec] = std::from_chars(code.data(), code.data() + code.size(), opcode, 16);
    if (code.empty() || code.size() > 2 || ec != std::errc() || end != code.data() + code.size()) {
      return ctx.Error(n, "op '{}' is not a SCSI opcode (two hex digits: 28 read, 2a write)", code);
    }
    if (!(s = ctx.Number(n, fields[3], "size", &size)).ok()) return s;
    if (!(s = ctx.Number(n, fields[4], "lbn", &lbn)).ok()) return s;
    if (lbn > UINT64_MAX / kSectorBytes) return ctx.Error(n, "lbn {} is too large", lbn);
    // READ and WRITE (6), (10), (16); every other command moves no data of the disk, and a
    // command of no bytes reads nothing.
    TraceOp op;
    switch (opcode) {
      case 0x08: case 0x28: case 0x88: op = TraceOp::kRead; break;
      case 0x0a: case 0x2a: case 0x8a: op = TraceOp::kWrite; break;
      default: continue;
    }
    if (size == 0) continue;
    if (!(s = ctx.AddFolded(n, lbn * kSectorBytes, size, op, out)).ok()) return s;
  }
  if (!header_seen) return ctx.Error(lines.number(), "empty trace: no header '{}'", kVscsiHeader);
  return Status::Ok();
}

TraceFormat Detect(std::string_view text) {
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (trimmed == kFioV2Header) return TraceFormat::kFioV2;
    if (trimmed == kFioV3Header) return TraceFormat::kFioV3;
    if (trimmed.starts_with("fio version")) return TraceFormat::kAuto;  // v1 or future: refuse
    const std::string compact = CompactHeader(trimmed);
    if (compact == kCcfsHeader) return TraceFormat::kCcfsCsv;
    if (compact == kVscsiHeader) return TraceFormat::kVscsi;
    if (std::count(trimmed.begin(), trimmed.end(), ',') == 6) return TraceFormat::kMsr;
    return TraceFormat::kAuto;
  }
  return TraceFormat::kAuto;
}

bool NeedsQuotes(std::string_view s) {
  return s.find_first_of(",\"\r\n") != std::string_view::npos ||
         (!s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '#'));
}

}  // namespace

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAuto: return "auto";
    case TraceFormat::kCcfsCsv: return "ccfs";
    case TraceFormat::kFioV2: return "fio2";
    case TraceFormat::kFioV3: return "fio3";
    case TraceFormat::kMsr: return "msr";
    case TraceFormat::kVscsi: return "vscsi";
  }
  return "?";
}

constexpr TraceFormat kAllFormats[] = {TraceFormat::kAuto,  TraceFormat::kCcfsCsv,
                                       TraceFormat::kFioV2, TraceFormat::kFioV3,
                                       TraceFormat::kMsr,   TraceFormat::kVscsi};

std::string TraceFormatChoices() {
  std::string list;
  for (size_t i = 0; i < std::size(kAllFormats); ++i) {
    if (i > 0) list += i + 1 == std::size(kAllFormats) ? " or " : ", ";
    list += TraceFormatName(kAllFormats[i]);
  }
  return list;
}

Status ParseTraceFormat(const std::string& name, TraceFormat* format) {
  for (TraceFormat f : kAllFormats) {
    if (name == TraceFormatName(f)) {
      *format = f;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(
      fmt::format("--trace-format {}: unknown ({})", name, TraceFormatChoices()));
}

Status ParseTrace(std::string_view text, const std::string& source, const Dataset& dataset,
                  TraceFormat format, std::vector<TraceRecord>* records) {
  if (dataset.pages() == 0) {
    return Status::InvalidArgument(fmt::format("{}: the data set has no pages", source));
  }
  if (format == TraceFormat::kAuto) {
    format = Detect(text);
    if (format == TraceFormat::kAuto) {
      return Status::InvalidArgument(fmt::format(
          "{}:1: unrecognised trace format: expected the header '{}', '{}', '{}' or '{}', or "
          "MSR Cambridge CSV lines of 7 fields",
          source, kCcfsHeader, kFioV2Header, kFioV3Header, kVscsiHeader));
    }
  }
  Context ctx(source, dataset);
  std::vector<TraceRecord> parsed;
  Status s;
  switch (format) {
    case TraceFormat::kCcfsCsv: s = ParseCcfsCsv(ctx, text, &parsed); break;
    case TraceFormat::kFioV2: s = ParseFio(ctx, text, 2, &parsed); break;
    case TraceFormat::kFioV3: s = ParseFio(ctx, text, 3, &parsed); break;
    case TraceFormat::kMsr: s = ParseMsr(ctx, text, &parsed); break;
    case TraceFormat::kVscsi: s = ParseVscsi(ctx, text, &parsed); break;
    case TraceFormat::kAuto: break;
  }
  if (!s.ok()) return s;
  if (parsed.empty()) {
    return Status::InvalidArgument(fmt::format("{}: the trace holds no read or write", source));
  }
  *records = std::move(parsed);
  return Status::Ok();
}

Status ReadTraceFile(const std::string& path, const Dataset& dataset, TraceFormat format,
                     std::vector<TraceRecord>* records) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::FromErrno(errno, path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Status::FromErrno(errno, path);
  return ParseTrace(buffer.str(), path, dataset, format, records);
}

std::string FormatTraceRecord(const Dataset& dataset, const TraceRecord& record) {
  const std::string& path = dataset.files()[record.file].path;
  std::string file;
  if (NeedsQuotes(path)) {
    file = "\"";
    for (char c : path) {
      if (c == '"') file += '"';
      file += c;
    }
    file += '"';
  } else {
    file = path;
  }
  return fmt::format("{},{},{},{}", file, record.offset, record.length,
                     record.op == TraceOp::kRead ? "read" : "write");
}

Status TraceWriter::Open(const std::string& path, const Dataset* dataset,
                         std::unique_ptr<TraceWriter>* writer) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return Status::FromErrno(errno, path);
  std::fprintf(out, "%.*s\n", static_cast<int>(kCcfsHeader.size()), kCcfsHeader.data());
  writer->reset(new TraceWriter(path, dataset, out));
  return Status::Ok();
}

TraceWriter::~TraceWriter() { Close(); }

Status TraceWriter::Append(const TraceRecord& record) {
  std::string line = FormatTraceRecord(*dataset_, record);
  line += '\n';
  MutexLock lock(&mu_);
  if (out_ == nullptr) return Status::InvalidArgument(path_ + ": trace already closed");
  if (std::fwrite(line.data(), 1, line.size(), out_) != line.size()) {
    return Status::FromErrno(errno, path_);
  }
  return Status::Ok();
}

Status TraceWriter::Close() {
  MutexLock lock(&mu_);
  if (out_ == nullptr) return Status::Ok();
  bool failed = std::ferror(out_) != 0;
  int err = errno;
  if (std::fclose(out_) != 0) {
    failed = true;
    err = errno;
  }
  out_ = nullptr;
  if (failed) return Status::FromErrno(err, path_);
  return Status::Ok();
}

}  // namespace ccfs
