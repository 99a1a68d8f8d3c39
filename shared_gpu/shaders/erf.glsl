// erf, erfc and Gelu in f32, shared by the Vulkan delegate's shaders
// (through gpu_ops.glsl) and the VGF delegate's (unary.comp, gelu.comp),
// so both GPU engines compute them alike. Include after
// `#extension GL_GOOGLE_include_directive : require`.

// erfc(z) for z >= 0: Numerical Recipes' erfcc, a Chebyshev fit with a
// relative error below 1.2e-7 (about 4e-6 in f32 at z = 6, where exp's
// argument loses bits). Relative, not absolute, accuracy is what Gelu's
// tail x/2 erfc(|x| / sqrt 2) needs.
float erfc_positive(float z) {
  const float t = 1.0 / (1.0 + 0.5 * z);
  const float p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                  t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(-z * z + p);
}

// erf: its Taylor series below 0.5 (relative error < 1e-7 there, where
// 1 - erfc would cancel), 1 - erfc above (absolute error < 2e-7).
float onnx_erf(float x) {
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

// Gelu: x/2 (1 + erf(x / sqrt 2)); for x < 0 the bracket is erfc(|x| / sqrt 2),
// taken directly so the small values of the tail keep their digits.
float gelu(float x) {
  const float z = x * 0.70710678118654752;
  return 0.5 * x * (z < -0.5 ? erfc_positive(-z) : 1.0 + onnx_erf(z));
}

// Gelu's tanh form: x/2 (1 + tanh(u)) = x * sigmoid(2u), which does not
// cancel for large negative x as 1 + tanh(u) does in f32.
float gelu_tanh(float x) {
  const float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * u));
}
