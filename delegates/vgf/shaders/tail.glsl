// The tail the dispatch plan folds into VGF's element-wise kernels
// (unary.comp, binary.comp, reduce.comp; Planner::tail_of): an affine per
// element of the output's last dim, then up to two unary ops, computed as
// the conv kernels' epilogue (shared_gpu/shaders/gpu_ops.glsl). Include
// after declaring, at the binding before the output, the affine buffer:
//   layout(std430, set = 0, binding = N) readonly buffer Affine { float affine[]; };
// and with `tail` (channels, epilogue_ops, params) in the push constants.

// Scalars only: a vec4 would be aligned to 16 bytes inside the push
// constants, away from the packed words the plan writes.
struct Tail {
  uint channels;  // 0: no affine (the binding is another buffer, unread)
  uint epilogue_ops;
  float p0, p1, p2, p3;
};

float apply_tail(Tail t, uint i, float r) {
  if (t.channels != 0u) {
    const uint c = i % t.channels;
    r = r * affine[c] + affine[t.channels + c];
  }
  return apply_epilogue(t.epilogue_ops, vec4(t.p0, t.p1, t.p2, t.p3), r);
}
