// Trace readers: each format is accepted, resolved against the data set, and every kind of
// malformed line is refused with SOURCE:LINE and what is wrong.
#include "trace/trace_file.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "testing/command.h"

namespace ccfs {
namespace {

class TraceFileTest : public ::testing::Test {
 protected:
  Dataset dataset_ = Dataset::FromFiles("/data/set", 8192,
                                        {{"a.txt", 100000}, {"dir/b.bin", 16384}, {"c,d.db", 8192}});

  // Parses `text` and expects failure naming `line` (0: a whole-trace error, no line) and
  // containing `what`.
  void ExpectError(std::string_view text, TraceFormat format, int line, const std::string& what) {
    std::vector<TraceRecord> records;
    Status s = ParseTrace(text, "t.trace", dataset_, format, &records);
    ASSERT_FALSE(s.ok()) << "accepted:\n" << text;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    if (line > 0) {
      EXPECT_NE(s.message().find("t.trace:" + std::to_string(line) + ": "), std::string::npos)
          << s.message();
    }
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
    EXPECT_TRUE(records.empty());
  }
};

TEST_F(TraceFileTest, CcfsCsvIsParsedAndWrittenBack) {
  std::string text =
      "file,offset,length,op\n"
      "# a comment\n"
      "a.txt,0,8192,read\n"
      "\n"
      "dir/b.bin,8192,4096,WRITE\r\n"
      "\"c,d.db\",100,10,read";  // last line without newline
  std::vector<TraceRecord> records;
  Status s = ParseTrace(text, "t.csv", dataset_, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1].file, 1u);
  EXPECT_EQ(records[1].offset, 8192u);
  EXPECT_EQ(records[1].length, 4096u);
  EXPECT_EQ(records[1].op, TraceOp::kWrite);
  EXPECT_EQ(records[2].file, 2u);
  EXPECT_EQ(FormatTraceRecord(dataset_, records[2]), "\"c,d.db\",100,10,read");

  // The writer's output reads back to the same records.
  std::string path = testing::TempPath("ccfs_trace_roundtrip.csv");
  std::unique_ptr<TraceWriter> writer;
  ASSERT_TRUE(TraceWriter::Open(path, &dataset_, &writer).ok());
  for (const TraceRecord& r : records) ASSERT_TRUE(writer->Append(r).ok());
  ASSERT_TRUE(writer->Close().ok());
  std::vector<TraceRecord> again;
  s = ReadTraceFile(path, dataset_, TraceFormat::kCcfsCsv, &again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(again.size(), records.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].file, records[i].file);
    EXPECT_EQ(again[i].offset, records[i].offset);
    EXPECT_EQ(again[i].length, records[i].length);
    EXPECT_EQ(again[i].op, records[i].op);
  }
  std::remove(path.c_str());
}

TEST_F(TraceFileTest, CcfsCsvRejectsMalformedLinesNamingTheLine) {
  const std::string h = "file,offset,length,op\n";
  auto csv = TraceFormat::kCcfsCsv;
  ExpectError(h + "a.txt,0,8192,read\na.txt,0,8192\n", csv, 3, "expected 4 fields");
  ExpectError(h + "a.txt,0,8192,read,extra\n", csv, 2, "expected 4 fields");
  ExpectError(h + "a.txt,zero,8192,read\n", csv, 2, "offset 'zero' is not a whole number");
  ExpectError(h + "a.txt,-8,8192,read\n", csv, 2, "offset '-8' is negative");
  ExpectError(h + "a.txt,99999999999999999999999,8192,read\n", csv, 2, "too large");
  ExpectError(h + "a.txt,0,4294967296,read\n", csv, 2, "length 4294967296 is too large");
  ExpectError(h + "a.txt,0,0,read\n", csv, 2, "length is 0");
  ExpectError(h + "a.txt,0,8192,append\n", csv, 2, "unknown op 'append'");
  ExpectError(h + "a.txt,100000,1,read\n", csv, 2, "offset 100000 is past the end of a.txt");
  ExpectError(h + "nosuch.txt,0,1,read\n", csv, 2, "'nosuch.txt' is not a file of the data set");
  ExpectError(h + "\"a.txt,0,8192,read\n", csv, 2, "unterminated quote");
  ExpectError("offset,file\na.txt,0,1,read\n", csv, 1, "expected the header");
  ExpectError(h, csv, 0, "no read or write");
}

TEST_F(TraceFileTest, FioVersion2IsParsed) {
  std::string text =
      "fio version 2 iolog\n"
      "/mnt/ccfs/a.txt add\n"
      "/mnt/ccfs/dir/b.bin add\n"
      "/mnt/ccfs/a.txt open\n"
      "/mnt/ccfs/a.txt read 0 8192\n"
      "/mnt/ccfs/a.txt wait 500 0\n"
      "/mnt/ccfs/dir/b.bin write 8192 8192\n"
      "/mnt/ccfs/a.txt sync 0 0\n"
      "/mnt/ccfs/a.txt close\n";
  std::vector<TraceRecord> records;
  Status s = ParseTrace(text, "t.log", dataset_, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].file, 0u);
  EXPECT_EQ(records[1].file, 1u);  // matched by its trailing path dir/b.bin
  EXPECT_EQ(records[1].op, TraceOp::kWrite);
  EXPECT_EQ(records[1].offset, 8192u);
}

TEST_F(TraceFileTest, FioVersion3IsParsed) {
  std::string text =
      "fio version 3 iolog\n"
      "0 /data/set/a.txt add\n"
      "1 /data/set/a.txt open\n"
      "5 /data/set/a.txt read 16384 4096\n"
      "9 /data/set/a.txt trim 0 4096\n"
      "12 /data/set/a.txt close\n";
  std::vector<TraceRecord> records;
  Status s = ParseTrace(text, "t.log", dataset_, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].offset, 16384u);
  EXPECT_EQ(records[0].length, 4096u);
}

TEST_F(TraceFileTest, FioRejectsMalformedLinesNamingTheLine) {
  const std::string v2 = "fio version 2 iolog\n/x/a.txt add\n";
  ExpectError(v2 + "/x/a.txt read 0\n", TraceFormat::kFioV2, 3, "got 3 fields");
  ExpectError(v2 + "/x/a.txt peek 0 10\n", TraceFormat::kFioV2, 3, "unknown action 'peek'");
  ExpectError(v2 + "/x/a.txt frob\n", TraceFormat::kFioV2, 3, "unknown file action 'frob'");
  ExpectError(v2 + "/x/a.txt read x 10\n", TraceFormat::kFioV2, 3, "offset 'x'");
  ExpectError(v2 + "/x/a.txt read 0 -1\n", TraceFormat::kFioV2, 3, "negative");
  ExpectError(v2 + "/x/a.txt read 200000 10\n", TraceFormat::kFioV2, 3, "past the end of a.txt");
  ExpectError(v2 + "/x/zzz.txt read 0 10\n", TraceFormat::kFioV2, 3, "not a file of the data set");
  const std::string v3 = "fio version 3 iolog\n0 /x/a.txt add\n";
  ExpectError(v3 + "/x/a.txt read 0 10\n", TraceFormat::kFioV3, 3, "got 4 fields");
  ExpectError(v3 + "t /x/a.txt read 0 10\n", TraceFormat::kFioV3, 3, "timestamp 't'");
  ExpectError(v3 + "5 /x/a.txt wait 100 0\n", TraceFormat::kFioV3, 3, "'wait' is not allowed");
  ExpectError("fio version 3 iolog\n", TraceFormat::kAuto, 0, "no read or write");
  ExpectError("fio version 1 iolog\n", TraceFormat::kAuto, 1, "unrecognised trace format");
  ExpectError("0 /x/a.txt add\n", TraceFormat::kFioV3, 1, "expected the header");
}

TEST_F(TraceFileTest, MsrIsFoldedOntoTheDataSet) {
  // a.txt has 13 pages, dir/b.bin 2, c,d.db 1: 16 in all.
  ASSERT_EQ(dataset_.pages(), 16u);
  std::string text =
      "128166372003061629,hm,1,Read,8192,4096,1684\n"
      "128166372003061630,hm,1,Write,106496,512,20.5\n"  // page 13 -> dir/b.bin page 0
      "128166372003061631,hm,1,Read,139264,8192,10\n";   // page 17 -> 17 % 16 = 1 -> a.txt 8192
  std::vector<TraceRecord> records;
  Status s = ParseTrace(text, "msr.csv", dataset_, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].file, 0u);
  EXPECT_EQ(records[0].offset, 8192u);
  EXPECT_EQ(records[1].file, 1u);
  EXPECT_EQ(records[1].offset, 0u);
  EXPECT_EQ(records[1].op, TraceOp::kWrite);
  EXPECT_EQ(records[2].file, 0u);
  EXPECT_EQ(records[2].offset, 8192u);
}

TEST_F(TraceFileTest, MsrRejectsMalformedLinesNamingTheLine) {
  const std::string ok = "128166372003061629,hm,1,Read,8192,4096,1684\n";
  auto msr = TraceFormat::kMsr;
  ExpectError(ok + "128166372003061629,hm,1,Read,8192,4096\n", msr, 2, "expected 7 fields");
  ExpectError(ok + "128166372003061629,hm,1,Erase,8192,4096,1\n", msr, 2, "unknown op 'Erase'");
  ExpectError(ok + "128166372003061629,hm,x,Read,8192,4096,1\n", msr, 2, "DiskNumber 'x'");
  ExpectError(ok + "128166372003061629,hm,1,Read,-5,4096,1\n", msr, 2, "Offset '-5' is negative");
  ExpectError(ok + "128166372003061629,hm,1,Read,5,0,1\n", msr, 2, "Size is 0");
  ExpectError(ok + "128166372003061629,hm,1,Read,5,1,fast\n", msr, 2, "ResponseTime 'fast'");
  ExpectError(ok + "1281663720030616299999999,hm,1,Read,5,1,1\n", msr, 2, "Timestamp");
}

TEST_F(TraceFileTest, VscsiIsFoldedOntoTheDataSetAndSkipsCommandsWithoutData) {
  // 16 pages in all (as above); lbn counts 512-byte sectors.
  std::string text =
      "Version, Time, Op, Size, Lbn\n"
      "1,33898,28,4096,16\n"     // sector 16 = byte 8192: a.txt page 1
      "1,33898,2a,512,208\n"     // byte 106496, page 13 -> dir/b.bin page 0
      "1,33899,35,0,0\n"         // SYNCHRONIZE CACHE: no data, skipped
      "1,33899,28,0,16\n"        // no bytes: skipped
      "2,33900,88,8192,272\n";   // READ(16), byte 139264, page 17 -> 1 -> a.txt 8192
  std::vector<TraceRecord> records;
  Status s = ParseTrace(text, "cloudphysics.csv", dataset_, TraceFormat::kAuto, &records);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].file, 0u);
  EXPECT_EQ(records[0].offset, 8192u);
  EXPECT_EQ(records[0].length, 4096u);
  EXPECT_EQ(records[1].file, 1u);
  EXPECT_EQ(records[1].offset, 0u);
  EXPECT_EQ(records[1].op, TraceOp::kWrite);
  EXPECT_EQ(records[2].file, 0u);
  EXPECT_EQ(records[2].offset, 8192u);
  EXPECT_EQ(records[2].op, TraceOp::kRead);
}

TEST_F(TraceFileTest, VscsiRejectsMalformedLinesNamingTheLine) {
  const std::string ok = "version,time,op,size,lbn\n1,33898,28,4096,16\n";
  auto vscsi = TraceFormat::kVscsi;
  ExpectError(ok + "1,33898,28,4096\n", vscsi, 3, "expected 5 fields");
  ExpectError(ok + "1,33898,zz,4096,16\n", vscsi, 3, "op 'zz' is not a SCSI opcode");
  ExpectError(ok + "1,33898,128,4096,16\n", vscsi, 3, "op '128'");
  ExpectError(ok + "1,t,28,4096,16\n", vscsi, 3, "time 't'");
  ExpectError(ok + "1,1,28,-1,16\n", vscsi, 3, "size '-1' is negative");
  ExpectError(ok + "1,1,28,4096,99999999999999999999\n", vscsi, 3, "lbn");
  ExpectError(ok + "1,1,28,4096,36893488147419103\n", vscsi, 3, "lbn 36893488147419103 is too large");
  ExpectError(ok + "1,1,28,2000000000,16\n", vscsi, 3, "length 2000000000 is too large");
  ExpectError("1,33898,28,4096,16\n", vscsi, 1, "expected the header");
  ExpectError("version,time,op,size,lbn\n1,1,35,0,0\n", vscsi, 0, "no read or write");
}

TEST_F(TraceFileTest, UnknownFormatAndMissingFileAreClearErrors) {
  ExpectError("hello world\n", TraceFormat::kAuto, 1, "unrecognised trace format");
  std::vector<TraceRecord> records;
  Status s = ReadTraceFile("/nonexistent/trace.csv", dataset_, TraceFormat::kAuto, &records);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/trace.csv"), std::string::npos) << s.message();
  TraceFormat format;
  EXPECT_TRUE(ParseTraceFormat("fio3", &format).ok());
  EXPECT_EQ(format, TraceFormat::kFioV3);
  EXPECT_TRUE(ParseTraceFormat("vscsi", &format).ok());
  EXPECT_EQ(format, TraceFormat::kVscsi);
  EXPECT_FALSE(ParseTraceFormat("blk", &format).ok());
}

}  // namespace
}  // namespace ccfs
