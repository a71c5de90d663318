// linrec: the linear recurrence y_l = c_l * y_{l-1} + x_l over many independent sequences (rows),
// on the GPU, with its backward (Lemmermann's "Linear Recurrences Accessible to Everyone", Part I).
//
//   forward:  y_l = c_l * y_{l-1} + x_l,   y_{-1} = 0            (reverse: y_l = c_l * y_{l+1} + x_l)
//   backward: dx_l = dy_l + c_{l+1} * dx_{l+1},  dx_L = 0        (reverse: dx_l = dy_l + c_{l-1} dx_{l-1})
//             dc_l = y_{l-1} * dx_l,  y_{-1} = 0                 (reverse: dc_l = y_{l+1} * dx_l)
//
// Every tensor is a row tensor [sequences, L] (rows.hpp: time contiguous, any row stride >= L) of the
// problem's dtype (fp32, bf16 or fp16); the arithmetic is fp32. Calls are asynchronous on `stream`;
// nothing is allocated and nothing synchronises. Outputs must not overlap the inputs. Bad arguments
// throw ShapeError naming the tensor; a build without CUDA throws UnsupportedError.
//
//   linrec::Problem problem{DType::bf16, {.sequences = S, .length = L}};
//   linrec::forward(problem, {.x = {x, DType::bf16, {S, L}}, .c = {c, DType::bf16, {S, L}},
//                             .y = {y, DType::bf16, {S, L}}}, {}, stream);
#pragma once

#include <optional>
#include <string_view>

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/scan/shape.hpp"
#include "flashrnn/tiling/scan_launch.hpp"

namespace flashrnn::linrec {

// The kernels of the paper, selectable for benchmarks:
//  automatic: pipe with the configuration of the ConstrINT model (the default);
//  ref:       one thread per sequence, a sequential loop;
//  tile:      one block per sequence, the whole sequence in one tile (the model picks a configuration
//             whose tile holds the sequence; none for sequences over 4096 elements);
//  pipe:      one block per sequence, tile after tile with the state carried between tiles.
enum class Variant { automatic, ref, tile, pipe };

std::string_view to_string(Variant variant);
Variant parse_variant(std::string_view name); // throws UnsupportedError

struct Problem {
    DType dtype = DType::fp32;
    ScanShape shape;
    bool reverse = false; // the recurrence runs from the end of each row
};

struct ForwardArgs {
    ConstTensorView x, c; // [sequences, L]
    TensorView y;         // out [sequences, L]
};

struct BackwardArgs {
    ConstTensorView dy; // upstream gradient [sequences, L]
    ConstTensorView c;  // the forward's coefficients
    ConstTensorView y;  // the forward's output
    TensorView dx, dc;  // out [sequences, L]
};

struct Options {
    Variant variant = Variant::automatic;
    // A forced configuration for tile and pipe (benchmarks and tests); it must be a compiled one.
    // Vector access on unaligned rows falls back to shared access.
    std::optional<ScanConfig> config;
};

void forward(const Problem& problem, const ForwardArgs& args, const Options& options, Stream stream);
void backward(const Problem& problem, const BackwardArgs& args, const Options& options, Stream stream);

// The configuration the pipe kernel would use for this problem (what `flashrnn tune --kernel linrec`
// prints), on the current device; `rows_aligned`: every tensor's rows start on 16-byte boundaries.
ScanConfig config(const Problem& problem, bool backward, bool rows_aligned);

} // namespace flashrnn::linrec
