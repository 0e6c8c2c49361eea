#include "testing/law.h"

#include <gtest/gtest.h>

namespace ccfs::testing {

std::unique_ptr<AccessDistribution> Law(const char* text, uint64_t pages) {
  DistSpec spec;
  EXPECT_TRUE(ParseDistSpec(text, 0.2, &spec).ok()) << text;
  std::unique_ptr<AccessDistribution> dist;
  EXPECT_TRUE(NewAccessDistribution(spec, pages, 1, &dist).ok()) << text;
  return dist;
}

}  // namespace ccfs::testing
