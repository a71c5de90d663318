// The alternating backend against the float64 CPU reference: every cell x dtype x pass on random
// data (the reference sees the inputs rounded to the dtype), over shapes that include B = 1, T = 1,
// head dimensions that are not multiples of 16 (and odd ones: scalar accesses), NH in {1, 3, 12}, the
// batch-first layout and the three recurrent-gradient policies. Outputs are poisoned before each run.
// A captured CUDA graph of forward + backward replays the eager results bit for bit.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "backend_check.hpp"
#include "flashrnn/alternating.hpp"

namespace flashrnn::testing {
namespace {

const Case kCases[] = {
    {1, 1, 1, 8},  {7, 3, 3, 24}, {5, 2, 12, 16},
    {9, 1, 1, 33}, {4, 5, 3, 64}, {6, 2, 1, 40, SequenceLayout::batch_first},
};

} // namespace

TEST_CASE("alternating backend matches the float64 reference: every cell, dtype and shape") {
    std::uint64_t seed = 1000;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
            for (const Case& c : kCases)
                check_cell(alternating_backend, cell, dtype, c, RecurrentGradient::full(), ++seed);
}

TEST_CASE("alternating backend: clipped and cut recurrent gradients") {
    std::uint64_t seed = 2000;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            check_cell(alternating_backend, cell, dtype, {6, 3, 3, 24}, RecurrentGradient::clipped(0.05),
                       ++seed);
            check_cell(alternating_backend, cell, dtype, {6, 3, 3, 24}, RecurrentGradient::cut(), ++seed);
        }
}

TEST_CASE("alternating backend: a captured CUDA graph replays the eager results bitwise") {
    check_graph_replay(alternating_backend, Cell::lstm, DType::bf16, {7, 3, 4, 48}, RecurrentGradient::full(),
                       4100);
    check_graph_replay(alternating_backend, Cell::lstm, DType::bf16, {9, 16, 1, 768},
                       RecurrentGradient::full(), 4101);
    check_graph_replay(alternating_backend, Cell::lstm, DType::bf16, {9, 16, 12, 64},
                       RecurrentGradient::cut(), 4102);
    check_graph_replay(alternating_backend, Cell::slstm, DType::fp32, {5, 16, 2, 16},
                       RecurrentGradient::clipped(0.05), 4103);
}

TEST_CASE("alternating backend: refuses bad arguments with the name of what is wrong") {
    const ProblemShape shape{3, 2, 2, 8};
    DeviceTensor wx(DType::fp32, 3 * 2 * 4 * 2 * 8);
    const std::size_t needed = alternating::forward_workspace_bytes(Cell::lstm, shape, DType::fp32);
    DeviceTensor ws(DType::fp32, needed / 4);
    alternating::ForwardArgs args{wx.data(), wx.data(), wx.data(), wx.data(), wx.data(), nullptr, nullptr};
    args.bias = nullptr;
    CHECK_THROWS_WITH_AS(
        alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed, nullptr),
        doctest::Contains("bias is null"), ShapeError);
    args.bias = wx.data();
    const std::string needs = "needs " + std::to_string(needed);
    CHECK_THROWS_WITH_AS(
        alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed - 1, nullptr),
        doctest::Contains(needs.c_str()), ShapeError);
    CHECK_THROWS_AS(
        alternating::forward(Cell::lstm, {0, 2, 2, 8}, DType::fp32, args, ws.data(), needed, nullptr),
        ShapeError);
    void* misaligned = static_cast<char*>(ws.data()) + 4;
    CHECK_THROWS_WITH_AS(
        alternating::forward(Cell::lstm, shape, DType::fp32, args, misaligned, needed, nullptr),
        doctest::Contains("workspace must be 16-byte aligned"), ShapeError);
    args.gate_cache = misaligned;
    CHECK_THROWS_WITH_AS(
        alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed, nullptr),
        doctest::Contains("gate_cache must be 16-byte aligned"), ShapeError);
    args.gate_cache = nullptr;
    alternating::BackwardArgs backward_args{};
    CHECK_THROWS_WITH_AS(alternating::backward(Cell::lstm, shape, DType::fp32, backward_args,
                                               RecurrentGradient::full(), ws.data(), needed, nullptr),
                         doctest::Contains("recurrent_weights is null"), ShapeError);
}

} // namespace flashrnn::testing
