// How the extra ops (ops_extra.cc) read their attributes and parameter
// inputs. Shape inference and the CPU kernels both call these, so the two
// can never read one node differently; the GPU delegates may call them too.
//
// Where an op moved a parameter from an attribute to an input at some opset
// (Split, Pad, ReduceSum), the helper takes the graph's opset and the input
// tensor (nullptr when it is omitted or, during shape inference, not a
// constant) and accepts only the form of that opset. Errors are plain
// reasons; callers put the node in front.
#pragma once

#include <string>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

// Shape: the dims of `input` it outputs. `start`/`end` (opset 15) select a
// range of the dims, clamped as Slice clamps.
Result<std::vector<int64_t>> shape_op_dims(const Attributes& attrs, const Shape& input);

// Split: the size of each of `num_outputs` outputs along `axis` (already
// normalised) of `input`. The sizes come from attribute `split` (opset <= 12)
// or input 1 (opset >= 13). From opset 18 attribute `num_outputs` may say
// how many equal chunks instead: ceil(dim / n) each, the last one smaller
// when the axis does not divide (the ONNX rule). Given neither, the axis is
// split evenly into the node's outputs, which requires it to divide.
Result<std::vector<int64_t>> split_sizes(const Attributes& attrs, int opset, const Tensor* split_input,
                                         const Shape& input, int64_t axis, size_t num_outputs);

struct PadParams {
  std::vector<int64_t> pads;  // ONNX order: all begins, then all ends; negative pads crop
  std::string mode;           // "constant", "reflect", "edge" or (opset 19) "wrap"
  double value = 0.0;         // fill of constant mode
};
// Pad: `pads`, `mode` and `value` are attributes before opset 11; from 11
// pads is input 1 and the fill is the optional scalar input 2; from 18 the
// optional input 3 (axes) names the dims that `pads` covers (2 values per
// axis), and the returned pads are expanded to every dim (0 elsewhere).
// `pads_input` must be given from opset 11 on; `value_input` may be nullptr
// (fill 0, or not known yet during shape inference), `axes_input` nullptr
// when omitted.
Result<PadParams> pad_params(const Attributes& attrs, int opset, const Shape& input, const Tensor* pads_input,
                             const Tensor* value_input, const Tensor* axes_input);

// The input index that output index `i + pad_begin` of a padded dim of
// `in` elements reads (i counts from the first input element), or -1 where
// constant mode fills. Negative pads crop, which the same mapping covers.
int64_t pad_source_index(int64_t i, int64_t in, const std::string& mode);

struct ReduceParams {
  std::vector<bool> reduced;  // per input dim
  bool keepdims = true;
  bool noop = false;  // noop_with_empty_axes with no axes: the output is the input
};
// Reduce* (ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd): the
// axes come from attribute `axes`, except for ReduceSum from opset 13 and
// every reduction from opset 18, which take them as optional input 1
// (`has_axes_input` tells the input is present, `axes_input` holds its
// values) with attribute noop_with_empty_axes.
Result<ReduceParams> reduce_params(const std::string& op, const Attributes& attrs, int opset, const Shape& input,
                                   bool has_axes_input, const Tensor* axes_input);
// The output shape of a reduction.
Shape reduced_shape(const Shape& input, const ReduceParams& params);

// ConvTranspose over (N, C, spatial...) with 1 or 2 spatial dims, every
// per-axis quantity resolved: pads from auto_pad or output_shape, and the
// output spatial size.
struct ConvTransposeGeometry {
  int64_t group = 1;
  int64_t out_channels = 0;
  std::vector<int64_t> in;   // spatial dims of X
  std::vector<int64_t> out;  // spatial dims of Y
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, output_padding;
};
// x: X's shape (N, C, spatial...); w: W's shape (C, M/group, kernel...).
Result<ConvTransposeGeometry> conv_transpose_geometry(const Attributes& attrs, const Shape& x, const Shape& w);

// Dropout at inference: whether the node passes its input through, given
// its ratio and training_mode inputs (nullptr when omitted or, during shape
// inference, not a constant; `has_training` tells the input is present).
// It does when training_mode is omitted or a constant false, or when the
// ratio is a constant 0, which drops nothing in training mode too (PyTorch
// 1.13 exports Swin's attention dropouts so, p = 0 and training_mode true,
// with their masks unread). Its mask output, if asked for, is then all true.
// Otherwise the reason it would drop at random.
Status dropout_passes_through(const Tensor* ratio, bool has_training, const Tensor* training);

}  // namespace hetsched
