// Collectives on intercommunicators (tests/inter_coll_suite.h) in host memory, on groups of
// unequal sizes: 1 + 2, 2 + 1 and 2 + 3 forked ranks.
#include <gtest/gtest.h>

#include <string>

#include "tests/api_test_util.h"
#include "tests/coll_suite.h"
#include "tests/inter_coll_suite.h"

namespace mpigpu::testing {
namespace {

TEST(ApiInterCollTest, EveryCollectiveOnIntercommunicators) {
  const struct {
    int n, low;
  } shapes[] = {{3, 1}, {3, 2}, {5, 2}};
  for (const auto& sh : shapes) {
    const int n = sh.n, low = sh.low;
    std::string r = RunApiJob(
        n, [n, low](int rank) { RunInterCollSuite(rank, n, low, HostMem()); }, 120);
    EXPECT_EQ(r, "") << low << " + " << n - low << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing
