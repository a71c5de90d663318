// The `flashrnn` command's arguments, parsed into a command without running it or exiting, so that
// the parser can be tested and fuzzed (tests/fuzz/flashrnn_cli.cpp).
#pragma once

#include "flashrnn/flashrnn.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace flashrnn::tools {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct HelpCommand {};

// `tune --gpu GPU --cell CELL ...`: the alternating pointwise kernel's or the fused kernels' launch,
// or the automatic backend's choice per pass and why.
struct TuneCommand {
    std::string gpu; // a preset or "device"
    Cell cell = Cell::lstm;
    std::int64_t heads = 0, head_dim = 0, batch = 0;
    DType dtype = DType::bf16;
    rnn::Backend backend = rnn::Backend::alternating;
    // --compile yes (fused only): each pass's configuration compiled for the GPU's architecture with
    // NVRTC, spills fed back to the model (compile_fused_tiling), as the backend does before it loads.
    bool compile = false;
};

// `tune --kernel linrec|rglru ...`: the scan kernels' launch.
struct TuneScanCommand {
    std::string kernel; // linrec or rglru
    std::int64_t length = 0, sequences = 0;
    std::string gpu; // a preset or "device"
    std::string dtype_name;
    bool aligned = true;
};

// `tune --kernel newton-gru|newton-lstm ...`: the Newton reduction's launch and the cost model's
// choice between the Newton and the sequential kernels.
struct TuneNewtonCommand {
    std::string kernel; // newton-gru or newton-lstm
    newton::Problem problem;
    std::string gpu; // a preset or "device"; empty: the device when present, else h100_sxm
    std::int64_t iterations = 3;
};

// `run --cell CELL ...`: forward and backward on random data.
struct RunCommand {
    Cell cell = Cell::lstm;
    ProblemShape problem;
    std::optional<rnn::Backend> gpu_backend; // none: the reference backend (CPU float64)
    DType dtype = DType::fp32;
};

// `run --cell flash_gru|flash_lstm ...`: the Newton family's float64 references, or one of its GPU
// backends checked against them.
struct RunNewtonCommand {
    newton::Problem problem;
    std::optional<newton::Backend> gpu_backend; // none: the reference backend (CPU float64)
    std::int64_t iterations = 3;
};

using Command =
    std::variant<HelpCommand, TuneCommand, TuneScanCommand, TuneNewtonCommand, RunCommand, RunNewtonCommand>;

// The arguments after the program's name. Throws UsageError, or the library's ShapeError and
// UnsupportedError for an impossible shape or an unknown cell, dtype or preset; nothing else.
Command parse_command(const std::vector<std::string>& arguments);

// Run the three `tune` commands, printing to `out`. Return the exit status; a configuration that
// cannot fit throws TilingError.
int run_tune(const TuneCommand& command, std::FILE* out);
int run_tune_scan(const TuneScanCommand& command, std::FILE* out);
int run_tune_newton(const TuneNewtonCommand& command, std::FILE* out);

} // namespace flashrnn::tools
