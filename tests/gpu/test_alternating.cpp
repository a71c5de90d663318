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
    {1, 1, 1, 8},  {7, 3, 3, 24}, {5, 2, 12, 16}, {9, 1, 1, 33},
    {4, 5, 3, 64}, {6, 2, 1, 40, SequenceLayout::batch_first},
};

// Every element equal bit for bit: decoding is exact, so equal storage bits are equal doubles' bits.
void check_same_bits(const std::vector<double>& replayed, const std::vector<double>& eager, const char* tensor) {
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

// One eager forward + backward on a stream of its own, then the same calls captured into a graph and
// replayed twice, the outputs poisoned before each replay: every output equal to the eager run's.
void check_graph_replay(Cell cell, DType dtype, const Case& c, RecurrentGradient policy, std::uint64_t seed) {
    const ProblemShape shape{c.T, c.B, c.NH, c.DH, c.layout};
    CAPTURE(to_string(shape));
    const RandomProblem problem(cell, shape, seed);
    const UpstreamGradients upstream = random_upstream(problem, seed + 1, false);

    DeviceTensor wx(dtype, problem.gate_inputs), r(dtype, problem.recurrent_weights), b(dtype, problem.bias),
        s0(dtype, problem.initial_states), d_states(dtype, upstream.d_states),
        d_last(dtype, upstream.d_last_state);
    DeviceTensor states(dtype, upstream.d_states.size()), last(dtype, upstream.d_last_state.size()),
        cache(DType::fp32, alternating::gate_cache_elements(cell, shape)), d_wx(dtype, problem.gate_inputs.size()),
        d_r(dtype, problem.recurrent_weights.size()), d_b(dtype, problem.bias.size()),
        d_s0(dtype, problem.initial_states.size());
    DeviceWorkspace forward_ws(alternating::forward_workspace_bytes(cell, shape, dtype));
    DeviceWorkspace backward_ws(alternating::backward_workspace_bytes(cell, shape, dtype));
    DeviceTensor* outputs[] = {&states, &last, &cache, &d_wx, &d_r, &d_b, &d_s0};
    const char* names[] = {"states", "last_state",      "gate_cache", "d_gate_inputs", "d_recurrent_weights",
                           "d_bias", "d_initial_states"};

    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    auto training_step = [&] {
        alternating::forward(cell, shape, dtype,
                             {wx.data(), r.data(), b.data(), s0.data(), states.data(), last.data(), cache.data()},
                             forward_ws.bytes.data(), forward_ws.bytes.bytes(), stream);
        alternating::backward(cell, shape, dtype,
                              {r.data(), states.data(), cache.data(), d_states.data(), d_last.data(), d_wx.data(),
                               d_r.data(), d_b.data(), d_s0.data()},
                              policy, backward_ws.bytes.data(), backward_ws.bytes.bytes(), stream);
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
    check_graph_replay(Cell::lstm, DType::bf16, {7, 3, 4, 48}, RecurrentGradient::full(), 4100);
    check_graph_replay(Cell::lstm, DType::bf16, {9, 16, 1, 768}, RecurrentGradient::full(), 4101);
    check_graph_replay(Cell::lstm, DType::bf16, {9, 16, 12, 64}, RecurrentGradient::cut(), 4102);
    check_graph_replay(Cell::slstm, DType::fp32, {5, 16, 2, 16}, RecurrentGradient::clipped(0.05), 4103);
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
