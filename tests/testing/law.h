// An access law over `pages` pages for the model's and the caches' tests (seed 1; the law's text
// as --dist takes it, pareto's hot fraction 0.2).
#ifndef CCFS_TESTS_TESTING_LAW_H_
#define CCFS_TESTS_TESTING_LAW_H_

#include <cstdint>
#include <memory>

#include "model/distribution.h"

namespace ccfs::testing {

std::unique_ptr<AccessDistribution> Law(const char* text, uint64_t pages);

}  // namespace ccfs::testing

#endif  // CCFS_TESTS_TESTING_LAW_H_
