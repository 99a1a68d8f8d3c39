// NCHW <-> NHWC conversions at the edges of XNNPACK segments. Sizes cross
// the 32-element tiles and the 4x4 register blocks with remainders, so
// every code path of the copy is checked against the index formula.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "delegates/cpu/xnnpack/layout_convert.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"

namespace hetsched::cpu::xnnpack {
namespace {

// Distinct values, so a misplaced element cannot go unnoticed.
std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) + 0.5f;
  return v;
}

class LayoutConvertTest : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, int64_t, int>> {};

TEST_P(LayoutConvertTest, NchwToNhwcAndBackPlaceEveryElement) {
  const auto [batch, channels, pixels, threads] = GetParam();
  Threadpool pool;
  if (threads > 1) {
    auto made = make_threadpool(threads);
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    pool = *made;
  }
  const size_t n = static_cast<size_t>(batch * channels * pixels);
  const std::vector<float> nchw = iota(n);
  std::vector<float> nhwc(n, -1.f), back(n, -1.f);
  nchw_to_nhwc(nchw.data(), nhwc.data(), batch, channels, pixels, pool.get());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < pixels; ++p)
        ASSERT_EQ(nhwc[(b * pixels + p) * channels + c], nchw[(b * channels + c) * pixels + p])
            << "n " << b << " c " << c << " p " << p;
  nhwc_to_nchw(nhwc.data(), back.data(), batch, channels, pixels, pool.get());
  EXPECT_EQ(back, nchw);
}

// Sizes below, at and above the split, with a ragged last chunk.
TEST(ParallelCopyTest, CopiesEveryByteWithAndWithoutAPool) {
  auto pool = make_threadpool(2);
  ASSERT_TRUE(pool.is_ok()) << pool.status().message();
  for (size_t floats : {size_t{10}, size_t{131072}, size_t{300001}}) {
    const std::vector<float> src = iota(floats);
    for (pthreadpool_t p : {static_cast<pthreadpool_t>(nullptr), pool->get()}) {
      std::vector<float> dst(floats, -1.f);
      parallel_copy(src.data(), dst.data(), floats * sizeof(float), p);
      EXPECT_EQ(dst, src) << floats << " floats, pool " << (p != nullptr);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, LayoutConvertTest,
                         ::testing::Values(std::make_tuple(1, 3, 7, 1), std::make_tuple(2, 4, 8, 1),
                                           std::make_tuple(1, 37, 70, 1), std::make_tuple(2, 96, 33, 2),
                                           std::make_tuple(1, 5, 1, 1), std::make_tuple(1, 1, 9, 1),
                                           std::make_tuple(3, 66, 131, 2)));

}  // namespace
}  // namespace hetsched::cpu::xnnpack
