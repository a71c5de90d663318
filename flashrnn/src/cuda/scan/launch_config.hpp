// The launch configuration of one scan call, shared by linrec and RG-LRU: the forced one (checked
// against the compiled ones) or the model's, with vector access replaced by shared access where a
// tensor's rows are not aligned to the packet.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/shape.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::cuda::scan {

// `tensors`: the call's row tensors, already checked (rows.hpp). Throws ShapeError naming `call`
// ("flashrnn::linrec::forward") when a forced configuration is not compiled or, with `single_tile`,
// its tile is shorter than the sequence.
ScanConfig resolve_scan_config(std::string_view call, ScanKernel kernel, DType dtype, const ScanShape& shape,
                               std::initializer_list<ConstTensorView> tensors,
                               const std::optional<ScanConfig>& forced, bool single_tile);

} // namespace flashrnn::cuda::scan
