// scheduler/layout.h: NCHW <-> NHWC on the host (uploads to and readbacks
// from islands that keep NHWC), against the index formula written out here.
#include "scheduler/layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace hetsched {
namespace {

template <typename T>
void check_round_trip(const Shape& s) {
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<T> nchw(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<T>(i * 7 + 3);
  std::vector<T> nhwc(nchw.size()), back(nchw.size());
  permute_layout(reinterpret_cast<const std::byte*>(nchw.data()), reinterpret_cast<std::byte*>(nhwc.data()), s,
                 sizeof(T), true);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          ASSERT_EQ(nhwc[static_cast<size_t>(((b * h + y) * w + x) * c + ch)],
                    nchw[static_cast<size_t>(((b * c + ch) * h + y) * w + x)])
              << "n " << b << " c " << ch << " y " << y << " x " << x;
  permute_layout(reinterpret_cast<const std::byte*>(nhwc.data()), reinterpret_cast<std::byte*>(back.data()), s,
                 sizeof(T), false);
  EXPECT_EQ(back, nchw);
}

TEST(LayoutTest, PermutesEveryElementSizeAndOddShapes) {
  check_round_trip<float>({1, 3, 224, 5});
  check_round_trip<float>({2, 7, 3, 5});
  check_round_trip<uint16_t>({3, 5, 1, 9});
  check_round_trip<uint8_t>({2, 3, 4, 5});
  check_round_trip<int64_t>({2, 4, 3, 3});
}

}  // namespace
}  // namespace hetsched
