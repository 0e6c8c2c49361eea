#include "util/strings.h"

#include <gtest/gtest.h>

namespace ccfs {
namespace {

TEST(IsUtf8Test, TakesWellFormedTextOnly) {
  for (const char* ok : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                         "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf", "\x7f"}) {
    EXPECT_TRUE(IsUtf8(ok)) << Printable(ok);
  }
  for (const char* bad : {"\xb4", "pin=\xb4", "\xc3", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf",
                          "\xed\xa0\x80", "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80",
                          "\xf5\x80\x80\x80", "\xff", "\xe2\x82", "a\xe2\x82"}) {
    EXPECT_FALSE(IsUtf8(bad)) << Printable(bad);
  }
}

}  // namespace
}  // namespace ccfs
