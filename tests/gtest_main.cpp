// main() of every test binary: gtest's, except that a run where nothing failed but something was skipped (a
// device test without a device, outside CI) exits 77, which ctest reports as skipped (SKIP_RETURN_CODE), not
// as passed. A failure anywhere still exits non-zero as a failure.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (rc == 0 && ::testing::UnitTest::GetInstance()->skipped_test_count() > 0) return 77;
  return rc;
}
