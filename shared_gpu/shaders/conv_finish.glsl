// The end of one conv output element, for conv2d.comp and
// conv2d_coopmat.comp without split-K (conv2d_reduce.comp does the same
// after adding the slices): the bias, the residual (a ResNet block's skip
// connection, fused by the host), then the epilogue ops. Included after
// the shader's bindings, push constants and kEpilogueOps.
float finish(float v, uint channel, uint index, vec4 p) {
  if (pc.has_bias != 0u) v += bias[channel];
  if (pc.has_residual != 0u) v += LOAD(5, residual, index);
  return apply_epilogue(kEpilogueOps, p, v);
}
