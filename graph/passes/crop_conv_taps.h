// Crops from a conv's kernel the rows and columns that read only padding
// for every output pixel: DeepLabV3's ASPP convs dilated 24 and 36 on a
// 14x14 map are 3x3 convs whose eight outer taps never reach the map, so
// they are 1x1 convs, a ninth of the work.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph`'s types are inferred. A 2-D Conv with a static input, an
// f32 constant weight, explicit pads (auto_pad NOTSET or VALID) and a
// first or last kernel row (column) whose input row (column) is outside
// the input for every output row (column) loses those rows (columns): its
// weight becomes the rest, its pads shrink by the dilation per row
// (column) dropped, so that the output keeps its size and values; a
// kernel left 1 wide along an axis has dilation 1 there. Not where every
// tap is padding (the output is the bias alone) or a pad would go below 0.
// Returns the number of convs cropped.
Result<int> crop_conv_taps(Graph& graph);

}  // namespace hetsched
