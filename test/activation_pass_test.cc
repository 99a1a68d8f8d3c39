// The fast kernels' activation passes (delegates/cpu/fast/activation_pass.h)
// against the functions worked out in double precision with the C
// library: sigmoid, SiLU, GELU (erf and tanh forms) and erf, over [-120, 120] in
// steps of 1/256 (exp's and erf's clamps, the sigmoid's saturation, the
// polynomial's range reduction at every n) and at the far ends, on runs
// whose lengths leave every tail length of a vector; NaN passes through.
// ctest runs this for AVX-512 (where the CPU has it: avx512_math.h), AVX2
// and baseline x86-64 (HETSCHED_FAST_ISA).
//
// Tolerance per element: 4e-6 of |f(x)| + 2e-7 for sigmoid, SiLU and
// GELU's tanh form (x times a sigmoid), 1e-6
// absolute for GELU's erf form and erf (whose rational erf is Eigen's, a few ulp of
// values of at most 1, and GELU's 1 + erf cancels near x = -5.7). One
// wrong digit in the exp polynomial's degree-2 coefficient is 1e-4 off at
// r = ln2/2; a tail mask one lane short leaves the NaN sentinel.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/gemm.h"

namespace hetsched {
namespace {

using cpu::fast::ActivationPass;

struct Case {
  std::string name;
  ActivationPass pass;
  std::function<double(double)> want;
  double relative, absolute;
};

std::vector<Case> cases() {
  FusedActivation sigmoid;
  sigmoid.kind = FusedActivation::Kind::kSigmoid;
  return {
      {"sigmoid", ActivationPass(sigmoid), [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 4e-6, 2e-7},
      {"silu", ActivationPass::silu(), [](double x) { return x / (1.0 + std::exp(-x)); }, 4e-6, 2e-7},
      {"gelu", ActivationPass::gelu(), [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }, 4e-6,
       1e-6},
      {"gelu_tanh", ActivationPass::gelu_tanh(),
       [](double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }, 4e-6,
       2e-7},
      {"erf", ActivationPass::erf(), [](double x) { return std::erf(x); }, 0, 1e-6},
  };
}

std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -120 * 256; i <= 120 * 256; ++i) x.push_back(static_cast<float>(i) / 256.f);
  for (float v : {1e-30f, 1e-8f, 200.f, 1000.f, 1e30f, std::numeric_limits<float>::max()}) {
    x.push_back(v);
    x.push_back(-v);
  }
  return x;
}

TEST(ActivationPassTest, MatchesTheCLibraryOverTheWholeRange) {
  const std::vector<float> x = sweep();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + " on " + cpu::fast::gemm_isa());
    std::vector<float> y(x.size(), std::numeric_limits<float>::quiet_NaN());
    c.pass.run(x.data(), y.data(), static_cast<int64_t>(x.size()));
    int bad = 0;
    for (size_t i = 0; i < x.size() && bad < 5; ++i) {
      const double want = c.want(x[i]);
      const double bound = c.relative * std::abs(want) + c.absolute;
      if (!(std::abs(y[i] - want) <= bound)) {
        ADD_FAILURE() << "x = " << x[i] << ": got " << y[i] << ", want " << want << " within " << bound;
        ++bad;
      }
    }
  }
}

// Every length from 1 to 70 (tails of 1-31 elements after whole steps of
// two vectors, and of 1-15 after one), in place and out of place; the
// element past the end stays untouched.
TEST(ActivationPassTest, EveryTailLengthInAndOutOfPlace) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> x(static_cast<size_t>(n) + 1), y(x.size(), std::numeric_limits<float>::quiet_NaN());
      for (int64_t i = 0; i <= n; ++i) x[static_cast<size_t>(i)] = 0.37f * static_cast<float>(i % 23) - 4.1f;
      y[static_cast<size_t>(n)] = 12345.f;
      std::vector<float> in_place = x;
      c.pass.run(x.data(), y.data(), n);
      c.pass.run(in_place.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.want(x[static_cast<size_t>(i)]);
        const double bound = c.relative * std::abs(want) + c.absolute;
        ASSERT_NEAR(y[static_cast<size_t>(i)], want, bound) << "n = " << n << ", i = " << i;
        ASSERT_EQ(in_place[static_cast<size_t>(i)], y[static_cast<size_t>(i)]) << "n = " << n << ", i = " << i;
      }
      EXPECT_EQ(y[static_cast<size_t>(n)], 12345.f) << "n = " << n;
      EXPECT_EQ(in_place[static_cast<size_t>(n)], x[static_cast<size_t>(n)]) << "n = " << n;
    }
  }
}

TEST(ActivationPassTest, NanStaysNan) {
  for (const Case& c : cases()) {
    std::vector<float> x(37, 0.5f), y(37);
    x[3] = x[20] = x[36] = std::numeric_limits<float>::quiet_NaN();
    c.pass.run(x.data(), y.data(), 37);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[20]) && std::isnan(y[36])) << c.name;
    EXPECT_FALSE(std::isnan(y[4])) << c.name;
  }
}

}  // namespace
}  // namespace hetsched
