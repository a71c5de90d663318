// The alternating backend against the float64 CPU reference: every cell x dtype x pass on random
// data (the reference sees the inputs rounded to the dtype), over shapes that include B = 1, T = 1,
// head dimensions that are not multiples of 16 (and odd ones: scalar accesses), NH in {1, 3, 12}, the
// batch-first layout and the three recurrent-gradient policies. Outputs are poisoned before each run.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include "device_tensor.hpp"
#include "flashrnn/alternating.hpp"
#include "test_support.hpp"

namespace flashrnn::testing {
namespace {

// Tolerances per dtype (see Tolerance): fp32 arithmetic throughout for fp32; bf16 and fp16 also store
// every state, the gate gradients and the weight gradient in their own precision at every step.
Tolerance forward_tolerance(DType dtype) {
    switch (dtype) {
    case DType::bf16:
        return {2e-2, 2e-2};
    case DType::fp16:
        return {4e-3, 4e-3};
    case DType::fp32:
        break;
    }
    return {2e-5, 2e-5};
}
Tolerance backward_tolerance(DType dtype) {
    switch (dtype) {
    case DType::bf16:
        return {4e-2, 4e-2};
    case DType::fp16:
        return {8e-3, 8e-3};
    case DType::fp32:
        break;
    }
    return {5e-5, 5e-5};
}

struct Case {
    std::int64_t T, B, NH, DH;
    SequenceLayout layout = SequenceLayout::time_major;
};

const Case kCases[] = {
    {1, 1, 1, 8},  {7, 3, 3, 24}, {5, 2, 12, 16}, {9, 1, 1, 33},
    {4, 5, 3, 64}, {6, 2, 1, 40, SequenceLayout::batch_first},
};

struct DeviceWorkspace {
    DeviceTensor bytes;
    explicit DeviceWorkspace(std::size_t size) : bytes(DType::fp32, (size + 3) / 4) {}
};

void check_cell(Cell cell, DType dtype, const Case& c, RecurrentGradient policy, std::uint64_t seed) {
    ProblemShape shape{c.T, c.B, c.NH, c.DH, c.layout};
    RandomProblem problem(cell, shape, seed);
    problem.gate_inputs = rounded_to(dtype, problem.gate_inputs);
    problem.recurrent_weights = rounded_to(dtype, problem.recurrent_weights);
    problem.bias = rounded_to(dtype, problem.bias);
    problem.initial_states = rounded_to(dtype, problem.initial_states);
    const reference::ForwardResult expected = problem.forward();
    UpstreamGradients upstream = random_upstream(problem, seed + 1, false);
    upstream.d_states = rounded_to(dtype, upstream.d_states);
    upstream.d_last_state = rounded_to(dtype, upstream.d_last_state);
    const reference::BackwardResult expected_grad = run_backward(problem, expected, upstream, policy);

    const std::string name = std::string(cell_info(cell).name) + " " + std::string(to_string(dtype)) + " " +
                             to_string(shape) + " policy " + std::to_string(static_cast<int>(policy.mode));
    CAPTURE(name);

    DeviceTensor wx(dtype, problem.gate_inputs), r(dtype, problem.recurrent_weights), b(dtype, problem.bias),
        s0(dtype, problem.initial_states);
    DeviceTensor states(dtype, expected.states.values.size()), last(dtype, expected.last_state.values.size());
    DeviceTensor cache(DType::fp32, alternating::gate_cache_elements(cell, shape));
    DeviceWorkspace forward_ws(alternating::forward_workspace_bytes(cell, shape, dtype));
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");

    alternating::forward(cell, shape, dtype,
                         {wx.data(), r.data(), b.data(), s0.data(), states.data(), last.data(), cache.data()},
                         forward_ws.bytes.data(), forward_ws.bytes.bytes(), stream);
    cuda_ok(cudaStreamSynchronize(stream), "forward");
    const Comparison states_check = compare(states.download(), expected.states.values, forward_tolerance(dtype));
    CHECK_MESSAGE(states_check.ok, states_check.describe("states"));
    const Comparison last_check = compare(last.download(), expected.last_state.values, forward_tolerance(dtype));
    CHECK_MESSAGE(last_check.ok, last_check.describe("last_state"));

    // The backward reads the GPU's own states, as a training step would.
    DeviceTensor d_states(dtype, upstream.d_states), d_last(dtype, upstream.d_last_state);
    DeviceTensor d_wx(dtype, problem.gate_inputs.size()), d_r(dtype, problem.recurrent_weights.size()),
        d_b(dtype, problem.bias.size()), d_s0(dtype, problem.initial_states.size());
    DeviceWorkspace backward_ws(alternating::backward_workspace_bytes(cell, shape, dtype));
    alternating::backward(cell, shape, dtype,
                          {r.data(), states.data(), cache.data(), d_states.data(), d_last.data(), d_wx.data(),
                           d_r.data(), d_b.data(), d_s0.data()},
                          policy, backward_ws.bytes.data(), backward_ws.bytes.bytes(), stream);
    cuda_ok(cudaStreamSynchronize(stream), "backward");
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
    const Tolerance tol = backward_tolerance(dtype);
    const std::pair<const DeviceTensor*, const reference::Tensor*> gradients[] = {
        {&d_wx, &expected_grad.d_gate_inputs},
        {&d_r, &expected_grad.d_recurrent_weights},
        {&d_b, &expected_grad.d_bias},
        {&d_s0, &expected_grad.d_initial_states}};
    const char* names[] = {"d_gate_inputs", "d_recurrent_weights", "d_bias", "d_initial_states"};
    for (int i = 0; i < 4; ++i) {
        const Comparison check = compare(gradients[i].first->download(), gradients[i].second->values, tol);
        CHECK_MESSAGE(check.ok, check.describe(names[i]));
    }
}

} // namespace

TEST_CASE("alternating backend matches the float64 reference: every cell, dtype and shape") {
    std::uint64_t seed = 1000;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16, DType::fp16})
            for (const Case& c : kCases)
                check_cell(cell, dtype, c, RecurrentGradient::full(), ++seed);
}

TEST_CASE("alternating backend: clipped and cut recurrent gradients") {
    std::uint64_t seed = 2000;
    for (Cell cell : all_cells)
        for (DType dtype : {DType::fp32, DType::bf16}) {
            check_cell(cell, dtype, {6, 3, 3, 24}, RecurrentGradient::clipped(0.05), ++seed);
            check_cell(cell, dtype, {6, 3, 3, 24}, RecurrentGradient::cut(), ++seed);
        }
}

TEST_CASE("alternating backend: refuses bad arguments with the name of what is wrong") {
    const ProblemShape shape{3, 2, 2, 8};
    DeviceTensor wx(DType::fp32, 3 * 2 * 4 * 2 * 8);
    const std::size_t needed = alternating::forward_workspace_bytes(Cell::lstm, shape, DType::fp32);
    DeviceTensor ws(DType::fp32, needed / 4);
    alternating::ForwardArgs args{wx.data(), wx.data(), wx.data(), wx.data(), wx.data(), nullptr, nullptr};
    args.bias = nullptr;
    CHECK_THROWS_WITH_AS(alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed, nullptr),
                         doctest::Contains("bias is null"), ShapeError);
    args.bias = wx.data();
    const std::string needs = "needs " + std::to_string(needed);
    CHECK_THROWS_WITH_AS(alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed - 1, nullptr),
                         doctest::Contains(needs.c_str()), ShapeError);
    CHECK_THROWS_AS(alternating::forward(Cell::lstm, {0, 2, 2, 8}, DType::fp32, args, ws.data(), needed, nullptr),
                    ShapeError);
    void* misaligned = static_cast<char*>(ws.data()) + 4;
    CHECK_THROWS_WITH_AS(alternating::forward(Cell::lstm, shape, DType::fp32, args, misaligned, needed, nullptr),
                         doctest::Contains("workspace must be 16-byte aligned"), ShapeError);
    args.gate_cache = misaligned;
    CHECK_THROWS_WITH_AS(alternating::forward(Cell::lstm, shape, DType::fp32, args, ws.data(), needed, nullptr),
                         doctest::Contains("gate_cache must be 16-byte aligned"), ShapeError);
    args.gate_cache = nullptr;
    alternating::BackwardArgs backward_args{};
    CHECK_THROWS_WITH_AS(alternating::backward(Cell::lstm, shape, DType::fp32, backward_args,
                                               RecurrentGradient::full(), ws.data(), needed, nullptr),
                         doctest::Contains("recurrent_weights is null"), ShapeError);
}

} // namespace flashrnn::testing
