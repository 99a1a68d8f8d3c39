// erf and Gelu for the VGF shaders (unary.comp's erf, gelu.comp). The same
// approximations as the Vulkan delegate's common.glsl, so both GPU engines
// agree with the CPU's std::erf to a few ulp; kept here because the two
// delegates share no shader sources.

// erfc(z) for z >= 0: Numerical Recipes' erfcc, a Chebyshev fit with a
// relative error below 1.2e-7. Relative accuracy is what Gelu's tail
// x/2 erfc(|x| / sqrt 2) needs.
float erfc_positive(float z) {
  const float t = 1.0 / (1.0 + 0.5 * z);
  const float q = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                  t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(-z * z + q);
}

// erf: its Taylor series below 0.5 (where 1 - erfc would cancel), 1 - erfc above.
float erf_f32(float x) {
  const float a = abs(x);
  if (a < 0.5) {
    const float x2 = x * x;
    return x * (1.1283791670955126 + x2 * (-0.37612638903183754 + x2 * (0.11283791670955126 +
                x2 * (-0.026866170645131252 + x2 * (0.005223977625442188 + x2 * (-0.0008548327023450852 +
                x2 * 0.00012055332981789664))))));
  }
  const float r = 1.0 - erfc_positive(a);
  return x < 0.0 ? -r : r;
}
