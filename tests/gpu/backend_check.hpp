// What the GPU tests of the recurrent backends share: a backend as rnn::forward / rnn::backward run it
// (Options::backend), the alternating tolerances per
// dtype, and the check of one cell, dtype, shape and policy against the float64 reference. Outputs
// are poisoned with NaN before each run (DeviceTensor poisons at creation), so an element no kernel
// wrote fails the comparison.
#pragma once

#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "device_tensor.hpp"
#include "flashrnn/rnn/passes.hpp"
#include "test_support.hpp"
#include "testing/rnn_arguments.hpp"

namespace flashrnn::testing {

// A backend as the checks call it; forward and backward may come from different backends, since
// they share the gate cache's layout.
struct Backend {
    const char* name;
    rnn::Backend backend;
    Tolerance (*forward_tolerance)(DType);
    Tolerance (*backward_tolerance)(DType);

    rnn::Options options(RecurrentGradient policy = RecurrentGradient::full()) const {
        return {backend, policy};
    }
};

// Tolerances of the alternating backend (see Tolerance): fp32 arithmetic throughout for fp32; bf16
// and fp16 also store every state, the gate gradients and the weight gradient in their own precision
// at every step.
inline Tolerance alternating_forward_tolerance(DType dtype) {
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
inline Tolerance alternating_backward_tolerance(DType dtype) {
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

inline Tolerance looser(Tolerance a, Tolerance b) {
    return {std::max(a.abs_tol, b.abs_tol), std::max(a.rel_tol, b.rel_tol)};
}

inline const Backend alternating_backend{"alternating", rnn::Backend::alternating,
                                         alternating_forward_tolerance, alternating_backward_tolerance};

struct Case {
    std::int64_t T, B, NH, DH;
    SequenceLayout layout = SequenceLayout::time_major;
};

struct DeviceWorkspace {
    DeviceTensor bytes;
    explicit DeviceWorkspace(std::size_t size) : bytes(DType::fp32, (size + 3) / 4) {}
};

// Random inputs rounded to the dtype, the reference's forward and backward on them, the forward of
// `forward_backend` and the backward of `backward_backend` on the GPU's own states and gate cache,
// compared element by element. The backward's tolerance is the looser of the two backends'.
inline void check_cell(const Backend& forward_backend, const Backend& backward_backend, Cell cell,
                       DType dtype, const Case& c, RecurrentGradient policy, std::uint64_t seed) {
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

    const std::string name = std::string(forward_backend.name) + " forward, " + backward_backend.name +
                             " backward: " + std::string(cell_info(cell).name) + " " +
                             std::string(to_string(dtype)) + " " + to_string(shape) + " policy " +
                             std::to_string(static_cast<int>(policy.mode));
    CAPTURE(name);

    DeviceTensor wx(dtype, problem.gate_inputs), r(dtype, problem.recurrent_weights), b(dtype, problem.bias),
        s0(dtype, problem.initial_states);
    DeviceTensor states(dtype, expected.states.values.size()), last(dtype, expected.last_state.values.size());
    const rnn::Problem rnn_problem{cell, dtype, shape};
    DeviceTensor cache(DType::fp32, rnn::gate_cache_elements(rnn_problem));
    DeviceWorkspace forward_ws(rnn::forward_workspace_bytes(rnn_problem, forward_backend.options()));
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");

    rnn::forward(rnn_problem,
                 forward_args(rnn_problem, wx, r, b, s0, states, &last, &cache, forward_ws.bytes),
                 forward_backend.options(), stream);
    cuda_ok(cudaStreamSynchronize(stream), "forward");
    const Tolerance forward_tol = forward_backend.forward_tolerance(dtype);
    const Comparison states_check = compare(states.download(), expected.states.values, forward_tol);
    CHECK_MESSAGE(states_check.ok, states_check.describe("states"));
    const Comparison last_check = compare(last.download(), expected.last_state.values, forward_tol);
    CHECK_MESSAGE(last_check.ok, last_check.describe("last_state"));

    // The backward reads the GPU's own states, as a training step would.
    DeviceTensor d_states(dtype, upstream.d_states), d_last(dtype, upstream.d_last_state);
    DeviceTensor d_wx(dtype, problem.gate_inputs.size()), d_r(dtype, problem.recurrent_weights.size()),
        d_b(dtype, problem.bias.size()), d_s0(dtype, problem.initial_states.size());
    DeviceWorkspace backward_ws(rnn::backward_workspace_bytes(rnn_problem, backward_backend.options(policy)));
    rnn::backward(rnn_problem,
                  backward_args(rnn_problem, r, states, cache, &d_states, &d_last, d_wx, d_r, d_b, d_s0,
                                backward_ws.bytes),
                  backward_backend.options(policy), stream);
    cuda_ok(cudaStreamSynchronize(stream), "backward");
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
    const Tolerance tol =
        looser(forward_backend.backward_tolerance(dtype), backward_backend.backward_tolerance(dtype));
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

inline void check_cell(const Backend& backend, Cell cell, DType dtype, const Case& c,
                       RecurrentGradient policy, std::uint64_t seed) {
    check_cell(backend, backend, cell, dtype, c, policy, seed);
}

// Every element equal bit for bit: decoding is exact, so equal storage bits are equal doubles' bits.
inline void check_same_bits(const std::vector<double>& replayed, const std::vector<double>& eager,
                            const char* tensor) {
    CAPTURE(tensor);
    REQUIRE(replayed.size() == eager.size());
    std::size_t first_difference = eager.size();
    for (std::size_t i = 0; i < eager.size() && first_difference == eager.size(); ++i)
        if (std::memcmp(&replayed[i], &eager[i], sizeof(double)) != 0) first_difference = i;
    CHECK_MESSAGE(first_difference == eager.size(),
                  tensor << ": element " << first_difference << " replayed "
                         << (first_difference < eager.size() ? replayed[first_difference] : 0.0) << ", eager "
                         << (first_difference < eager.size() ? eager[first_difference] : 0.0));
}

// One eager forward + backward of `backend` on a stream of its own, then the same calls captured into
// a graph and replayed twice, the outputs poisoned before each replay: every output equal to the eager
// run's bit for bit.
inline void check_graph_replay(const Backend& backend, Cell cell, DType dtype, const Case& c,
                               RecurrentGradient policy, std::uint64_t seed) {
    const ProblemShape shape{c.T, c.B, c.NH, c.DH, c.layout};
    CAPTURE(to_string(shape));
    const rnn::Problem rnn_problem{cell, dtype, shape};
    const RandomProblem problem(cell, shape, seed);
    const UpstreamGradients upstream = random_upstream(problem, seed + 1, false);

    DeviceTensor wx(dtype, problem.gate_inputs), r(dtype, problem.recurrent_weights), b(dtype, problem.bias),
        s0(dtype, problem.initial_states), d_states(dtype, upstream.d_states),
        d_last(dtype, upstream.d_last_state);
    DeviceTensor states(dtype, upstream.d_states.size()), last(dtype, upstream.d_last_state.size()),
        cache(DType::fp32, rnn::gate_cache_elements(rnn_problem)), d_wx(dtype, problem.gate_inputs.size()),
        d_r(dtype, problem.recurrent_weights.size()), d_b(dtype, problem.bias.size()),
        d_s0(dtype, problem.initial_states.size());
    DeviceWorkspace forward_ws(rnn::forward_workspace_bytes(rnn_problem, backend.options()));
    DeviceWorkspace backward_ws(rnn::backward_workspace_bytes(rnn_problem, backend.options(policy)));
    DeviceTensor* outputs[] = {&states, &last, &cache, &d_wx, &d_r, &d_b, &d_s0};
    const char* names[] = {"states", "last_state",      "gate_cache", "d_gate_inputs", "d_recurrent_weights",
                           "d_bias", "d_initial_states"};

    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    auto training_step = [&] {
        rnn::forward(rnn_problem,
                     forward_args(rnn_problem, wx, r, b, s0, states, &last, &cache, forward_ws.bytes),
                     backend.options(), stream);
        rnn::backward(rnn_problem,
                      backward_args(rnn_problem, r, states, cache, &d_states, &d_last, d_wx, d_r, d_b, d_s0,
                                    backward_ws.bytes),
                      backend.options(policy), stream);
    };
    training_step();
    cuda_ok(cudaStreamSynchronize(stream), "eager forward and backward");
    std::vector<std::vector<double>> eager;
    for (const DeviceTensor* output : outputs)
        eager.push_back(output->download());

    cudaGraph_t graph = nullptr;
    cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
        training_step();
    } catch (...) { // leave the stream out of capture, or every later allocation of this thread fails
        cudaStreamEndCapture(stream, &graph);
        if (graph) cudaGraphDestroy(graph);
        cudaStreamDestroy(stream);
        throw;
    }
    cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    cudaGraphDestroy(graph);
    for (int replay = 0; replay < 2; ++replay) {
        CAPTURE(replay);
        for (DeviceTensor* output : outputs)
            output->poison();
        cuda_ok(cudaDeviceSynchronize(), "poison");
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        cuda_ok(cudaStreamSynchronize(stream), "graph replay");
        for (std::size_t i = 0; i < eager.size(); ++i)
            check_same_bits(outputs[i]->download(), eager[i], names[i]);
    }
    cudaGraphExecDestroy(exec);
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

} // namespace flashrnn::testing
