// linrec: the linear recurrence y_l = c_l * y_{l-1} + x_l over many independent sequences (rows),
// on the GPU, with its backward (Lemmermann's "Linear Recurrences Accessible to Everyone", Part I).
//
//   forward:  y_l = c_l * y_{l-1} + x_l,   y_{-1} = 0            (reverse: y_l = c_l * y_{l+1} + x_l)
//   backward: dx_l = dy_l + c_{l+1} * dx_{l+1},  dx_L = 0        (reverse: dx_l = dy_l + c_{l-1} dx_{l-1})
//             dc_l = y_{l-1} * dx_l,  y_{-1} = 0                 (reverse: dc_l = y_{l+1} * dx_l)
//
// Every tensor has the caller's dtype (fp32, bf16 or fp16); the arithmetic is fp32. Calls are
// asynchronous on `stream`; nothing is allocated and nothing synchronises. Outputs must not overlap
// the inputs. Bad arguments throw std::invalid_argument (see scan.hpp); a build without CUDA throws
// std::runtime_error.
#pragma once

#include <optional>
#include <string_view>

#include "flashrnn/cuda_stream.hpp"
#include "flashrnn/dtype.hpp"
#include "flashrnn/scan.hpp"
#include "flashrnn/scan_launch.hpp"

namespace flashrnn {

// The kernels of the paper, selectable for benchmarks:
//  automatic: pipe with the configuration of the ConstrINT model (the default);
//  ref:       one thread per sequence, a sequential loop;
//  tile:      one block per sequence, the whole sequence in one tile (the model picks a configuration
//             whose tile holds the sequence; none for sequences over 4096 elements);
//  pipe:      one block per sequence, tile after tile with the state carried between tiles.
enum class LinrecVariant { automatic, ref, tile, pipe };

std::string_view to_string(LinrecVariant variant);
LinrecVariant parse_linrec_variant(std::string_view name); // throws std::invalid_argument

struct LinrecOptions {
    LinrecVariant variant = LinrecVariant::automatic;
    // A forced configuration for tile and pipe (benchmarks and tests); it must be a compiled one.
    // Vector access on unaligned rows falls back to shared access.
    std::optional<ScanConfig> config;
};

void linrec_forward(DType dtype, const ScanShape& shape, ConstRows x, ConstRows c, Rows y, bool reverse,
                    Stream stream, const LinrecOptions& options = {});

void linrec_backward(DType dtype, const ScanShape& shape, ConstRows dy, ConstRows c, ConstRows y, Rows dx,
                     Rows dc, bool reverse, Stream stream, const LinrecOptions& options = {});

// The configuration the pipe kernel would use for this call (what `flashrnn tune --kernel linrec`
// prints), on the current device.
ScanConfig linrec_config(DType dtype, const ScanShape& shape, bool backward, bool rows_aligned);

} // namespace flashrnn
