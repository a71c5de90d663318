// The alternating backend against the float64 CPU reference: every cell x dtype x pass on random
// data (the reference sees the inputs rounded to the dtype), over shapes that include B = 1, T = 1,
// head dimensions that are not multiples of 16 (and odd ones: scalar accesses), NH in {1, 3, 12}, the
// batch-first layout and the three recurrent-gradient policies. Outputs are poisoned before each run.
// A captured CUDA graph of forward + backward replays the eager results bit for bit. The graphs the
// backend keeps for repeated calls give bitwise the results of direct launches: call after call, with
// new buffers between calls (no graph writes the buffers of an earlier call), with shapes interleaved,
// inside the caller's own stream capture and on the legacy default stream.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <vector>

#include "backend_check.hpp"
#include "flashrnn/rnn/alternating.hpp"

namespace flashrnn::testing {
namespace {

const Case kCases[] = {
    {1, 1, 1, 8},  {7, 3, 3, 24}, {5, 2, 12, 16},
    {9, 1, 1, 33}, {4, 5, 3, 64}, {6, 2, 1, 40, SequenceLayout::batch_first},
};

// The graph-reuse switch as a test found it, restored when the test ends.
struct GraphReuseRestorer {
    bool before = alternating::graph_reuse();
    ~GraphReuseRestorer() { alternating::set_graph_reuse(before); }
};

alternating::GraphReuseStats operator-(const alternating::GraphReuseStats& a,
                                       const alternating::GraphReuseStats& b) {
    return {a.made - b.made, a.staged - b.staged, a.replayed - b.replayed, a.direct - b.direct, a.kept};
}

// One problem's random inputs (from `seed`), its outputs and workspaces, and a forward + backward on
// them: the buffers of one training step.
struct TrainingStep {
    Cell cell;
    DType dtype;
    ProblemShape shape;
    RecurrentGradient policy;
    RandomProblem problem;
    UpstreamGradients upstream;
    DeviceTensor wx, r, b, s0, d_states, d_last;
    DeviceTensor states, last, cache, d_wx, d_r, d_b, d_s0;
    DeviceWorkspace forward_ws, backward_ws;

    TrainingStep(Cell cell_, DType dtype_, const Case& c, RecurrentGradient policy_, std::uint64_t seed)
        : cell(cell_), dtype(dtype_), shape{c.T, c.B, c.NH, c.DH, c.layout}, policy(policy_),
          problem(cell, shape, seed), upstream(random_upstream(problem, seed + 1, false)),
          wx(dtype, problem.gate_inputs), r(dtype, problem.recurrent_weights), b(dtype, problem.bias),
          s0(dtype, problem.initial_states), d_states(dtype, upstream.d_states),
          d_last(dtype, upstream.d_last_state), states(dtype, upstream.d_states.size()),
          last(dtype, upstream.d_last_state.size()),
          cache(DType::fp32, rnn::gate_cache_elements(rnn_problem())),
          d_wx(dtype, problem.gate_inputs.size()), d_r(dtype, problem.recurrent_weights.size()),
          d_b(dtype, problem.bias.size()), d_s0(dtype, problem.initial_states.size()),
          forward_ws(rnn::forward_workspace_bytes(rnn_problem(), options())),
          backward_ws(rnn::backward_workspace_bytes(rnn_problem(), options())) {}

    rnn::Problem rnn_problem() const { return {cell, dtype, shape}; }
    rnn::Options options() const { return {rnn::Backend::alternating, policy}; }

    std::vector<DeviceTensor*> outputs() { return {&states, &last, &cache, &d_wx, &d_r, &d_b, &d_s0}; }
    static constexpr const char* output_names[] = {"states",          "last_state",          "gate_cache",
                                                   "d_gate_inputs",   "d_recurrent_weights", "d_bias",
                                                   "d_initial_states"};

    void poison_outputs() {
        for (DeviceTensor* output : outputs())
            output->poison();
        cuda_ok(cudaDeviceSynchronize(), "poison");
    }
    std::vector<std::vector<double>> download_outputs() {
        std::vector<std::vector<double>> values;
        for (const DeviceTensor* output : outputs())
            values.push_back(output->download());
        return values;
    }
    void run(cudaStream_t stream) {
        rnn::forward(rnn_problem(),
                     forward_args(rnn_problem(), wx, r, b, s0, states, &last, &cache, forward_ws.bytes),
                     options(), stream);
        rnn::backward(rnn_problem(),
                      backward_args(rnn_problem(), r, states, cache, &d_states, &d_last, d_wx, d_r, d_b, d_s0,
                                    backward_ws.bytes),
                      options(), stream);
    }
    // Outputs poisoned, one forward + backward on `stream`, the outputs.
    std::vector<std::vector<double>> poisoned_run(cudaStream_t stream) {
        poison_outputs();
        run(stream);
        cuda_ok(cudaStreamSynchronize(stream), "forward and backward");
        return download_outputs();
    }
    // The outputs of direct launches (graphs off).
    std::vector<std::vector<double>> direct_run(cudaStream_t stream) {
        alternating::set_graph_reuse(false);
        const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
        std::vector<std::vector<double>> values = poisoned_run(stream);
        const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
        CHECK(delta.direct == 2);
        CHECK(delta.made + delta.staged + delta.replayed == 0);
        alternating::set_graph_reuse(true);
        return values;
    }
};

void check_same_outputs(const std::vector<std::vector<double>>& values,
                        const std::vector<std::vector<double>>& expected) {
    REQUIRE(values.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        check_same_bits(values[i], expected[i], TrainingStep::output_names[i]);
}

struct Config {
    Cell cell;
    DType dtype;
    Case shape;
    RecurrentGradient policy;
};

// Cells, dtypes, policies, both layouts, and (1, 768): the per-gate R^T partial sums.
const Config kReuseConfigs[] = {
    {Cell::lstm, DType::bf16, {9, 16, 12, 64}, RecurrentGradient::full()},
    {Cell::lstm, DType::bf16, {5, 16, 1, 768}, RecurrentGradient::full()},
    {Cell::gru, DType::fp32, {7, 3, 3, 24}, RecurrentGradient::cut()},
    {Cell::slstm, DType::fp16, {5, 2, 1, 40, SequenceLayout::batch_first}, RecurrentGradient::clipped(0.05)},
    {Cell::lstm, DType::bf16, {9, 16, 3, 64}, RecurrentGradient::full()}, // the first but for NH
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

TEST_CASE("alternating backend: kept graphs give the direct launches' results bitwise, call after call") {
    const GraphReuseRestorer restore;
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    std::uint64_t seed = 4200;
    for (const Config& config : kReuseConfigs) {
        TrainingStep step(config.cell, config.dtype, config.shape, config.policy, ++seed);
        CAPTURE(to_string(step.shape));
        const std::vector<std::vector<double>> direct = step.direct_run(stream);
        alternating::release_graphs();
        const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
        CHECK(before.kept == 0);
        for (int call = 0; call < 3; ++call) {
            CAPTURE(call);
            check_same_outputs(step.poisoned_run(stream), direct);
        }
        const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
        CHECK(delta.made == 2); // forward and backward, captured on the first call
        CHECK(delta.replayed == 4);
        CHECK(delta.staged + delta.direct == 0);
        CHECK(delta.kept == 2);
    }
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST_CASE("alternating backend: kept graphs with shapes interleaved") {
    const GraphReuseRestorer restore;
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    std::vector<std::unique_ptr<TrainingStep>> steps;
    std::vector<std::vector<std::vector<double>>> direct;
    std::uint64_t seed = 4300;
    for (const Config& config : kReuseConfigs) {
        steps.push_back(
            std::make_unique<TrainingStep>(config.cell, config.dtype, config.shape, config.policy, ++seed));
        direct.push_back(steps.back()->direct_run(stream));
    }
    alternating::release_graphs();
    const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
    const int order[] = {0, 1, 2, 3, 4, 2, 0, 4, 1, 3, 0, 4, 4};
    for (int index : order) {
        CAPTURE(index);
        check_same_outputs(steps[index]->poisoned_run(stream), direct[index]);
    }
    const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
    CHECK(delta.made == 2 * std::size(kReuseConfigs));
    CHECK(delta.replayed == 2 * (std::size(order) - std::size(kReuseConfigs)));
    CHECK(delta.staged + delta.direct == 0);
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST_CASE("alternating backend: new buffers between calls; no kept graph writes an earlier call's buffers") {
    // More sets of buffers of one shape than the backend keeps graphs per shape: calls make graphs,
    // replay them, and run the staged graph with the other sets' buffers copied in and out. Every set has its
    // own inputs, so a graph that read stale pointers gives other values; every set's outputs are poisoned
    // before each call and only the called set's may change.
    const GraphReuseRestorer restore;
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    constexpr int kSets = 6;
    std::vector<std::unique_ptr<TrainingStep>> sets;
    std::vector<std::vector<std::vector<double>>> direct;
    for (int i = 0; i < kSets; ++i) {
        sets.push_back(std::make_unique<TrainingStep>(Cell::lstm, DType::bf16, Case{6, 4, 3, 32},
                                                      RecurrentGradient::full(), 4400 + 2 * i));
        direct.push_back(sets.back()->direct_run(stream));
    }
    sets[0]->poison_outputs();
    const std::vector<std::vector<double>> poisoned = sets[0]->download_outputs();
    alternating::release_graphs();
    const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
    const int order[] = {0, 0, 1, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 5, 2, 0};
    for (int index : order) {
        CAPTURE(index);
        for (auto& set : sets)
            set->poison_outputs();
        sets[index]->run(stream);
        cuda_ok(cudaStreamSynchronize(stream), "forward and backward");
        for (int i = 0; i < kSets; ++i) {
            CAPTURE(i);
            check_same_outputs(sets[i]->download_outputs(), i == index ? direct[i] : poisoned);
        }
    }
    const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
    CHECK(delta.made + delta.staged + delta.replayed == 2 * std::size(order));
    CHECK(delta.made >= 2);
    CHECK(delta.staged > 0);
    CHECK(delta.replayed > 0);
    CHECK(delta.direct == 0);
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST_CASE("alternating backend: staged calls on two streams without synchronisation between them") {
    // The staged graph's buffers are shared by every call of the shape: a call on the other stream
    // must wait for the previous call's copies out before it copies its inputs in.
    const GraphReuseRestorer restore;
    cudaStream_t streams[2];
    for (cudaStream_t& s : streams)
        cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    constexpr int kSets = 8;
    std::vector<std::unique_ptr<TrainingStep>> sets;
    std::vector<std::vector<std::vector<double>>> direct;
    for (int i = 0; i < kSets; ++i) {
        sets.push_back(std::make_unique<TrainingStep>(Cell::gru, DType::fp32, Case{11, 5, 2, 48},
                                                      RecurrentGradient::full(), 4600 + i));
        direct.push_back(sets.back()->direct_run(streams[0]));
    }
    alternating::release_graphs();
    for (int round = 0; round < 2; ++round) {
        CAPTURE(round);
        const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
        for (auto& set : sets)
            set->poison_outputs();
        for (int i = 0; i < kSets; ++i)
            sets[i]->run(streams[i % 2]);
        for (cudaStream_t s : streams)
            cuda_ok(cudaStreamSynchronize(s), "forward and backward");
        for (int i = 0; i < kSets; ++i) {
            CAPTURE(i);
            check_same_outputs(sets[i]->download_outputs(), direct[i]);
        }
        const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
        CHECK(delta.staged ==
              2 * (kSets - 4)); // sets 4..7 each round, forward and backward: 4 kept per shape
        CHECK(delta.direct == 0);
    }
    for (cudaStream_t s : streams)
        cuda_ok(cudaStreamDestroy(s), "cudaStreamDestroy");
}

TEST_CASE("alternating backend: inside the caller's stream capture it launches directly; the legacy stream") {
    const GraphReuseRestorer restore;
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    TrainingStep step(Cell::lstm, DType::bf16, {7, 3, 4, 48}, RecurrentGradient::full(), 4500);
    const std::vector<std::vector<double>> direct = step.direct_run(stream);
    alternating::release_graphs();
    check_same_outputs(step.poisoned_run(stream), direct); // keeps graphs of this shape and these pointers

    for (cudaStreamCaptureMode mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal}) {
        CAPTURE(static_cast<int>(mode));
        const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
        cudaGraph_t graph = nullptr;
        cuda_ok(cudaStreamBeginCapture(stream, mode), "cudaStreamBeginCapture");
        try {
            step.run(stream);
        } catch (...) { // leave the stream out of capture, or every later allocation of this thread fails
            cudaStreamEndCapture(stream, &graph);
            if (graph) cudaGraphDestroy(graph);
            throw;
        }
        cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
        const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
        CHECK(delta.direct == 2);
        CHECK(delta.made + delta.staged + delta.replayed == 0);
        cudaGraphExec_t exec = nullptr;
        cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
        cudaGraphDestroy(graph);
        for (int replay = 0; replay < 2; ++replay) {
            CAPTURE(replay);
            step.poison_outputs();
            cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
            cuda_ok(cudaStreamSynchronize(stream), "graph replay");
            check_same_outputs(step.download_outputs(), direct);
        }
        cudaGraphExecDestroy(exec);
    }

    const alternating::GraphReuseStats before = alternating::graph_reuse_stats();
    for (int call = 0; call < 2; ++call) {
        CAPTURE(call);
        check_same_outputs(step.poisoned_run(nullptr), direct);
    }
    const alternating::GraphReuseStats delta = alternating::graph_reuse_stats() - before;
    CHECK(delta.replayed == 4); // the graphs are launched on any stream
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST_CASE("alternating backend: refuses bad arguments with the name of what is wrong") {
    const ProblemShape shape{3, 2, 2, 8};
    const rnn::Problem problem{Cell::lstm, DType::fp32, shape};
    const rnn::Options options{rnn::Backend::alternating};
    const CellInfo info = cell_info(Cell::lstm);
    DeviceTensor buffer(DType::fp32, 512); // holds the largest tensor, R: [4, 2, 8, 8]
    auto view = [&](const NamedShape& s) { return TensorView{buffer.data(), DType::fp32, s.sizes()}; };
    const std::size_t needed = rnn::forward_workspace_bytes(problem, options);
    DeviceTensor ws(DType::fp32, needed / 4);
    rnn::ForwardArgs args{view(gate_inputs_shape(info, shape)),
                          view(recurrent_weights_shape(info, shape)),
                          view(bias_shape(info, shape)),
                          view(states_shape(info, shape)),
                          view(state_sequence_shape(info, shape)),
                          {},
                          {},
                          {ws.data(), needed}};
    args.bias = {};
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr), doctest::Contains("bias is null"),
                         ShapeError);
    args.bias = view(bias_shape(info, shape));
    const std::string needs = "needs " + std::to_string(needed);
    args.workspace.bytes = needed - 1;
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr), doctest::Contains(needs.c_str()),
                         ShapeError);
    args.workspace.bytes = needed;
    CHECK_THROWS_AS(rnn::forward({Cell::lstm, DType::fp32, {0, 2, 2, 8}}, args, options, nullptr),
                    ShapeError);
    void* misaligned = static_cast<char*>(ws.data()) + 4;
    args.workspace.data = misaligned;
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr),
                         doctest::Contains("workspace must be 16-byte aligned"), ShapeError);
    args.workspace.data = ws.data();
    args.gate_cache =
        TensorView{misaligned, DType::fp32, {static_cast<std::int64_t>(rnn::gate_cache_elements(problem))}};
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr),
                         doctest::Contains("gate_cache must be 16-byte aligned"), ShapeError);
    args.gate_cache = {};
    // A tensor of the wrong shape or dtype is named with what was expected and what came.
    args.recurrent_weights = TensorView{buffer.data(), DType::fp32, {4, 2, 8, 4}};
    CHECK_THROWS_WITH_AS(
        rnn::forward(problem, args, options, nullptr),
        doctest::Contains(
            "recurrent_weights: expected [G_rec=4, NH=2, DH=8, DH=8] fp32, got [4, 2, 8, 4] fp32"),
        ShapeError);
    args.recurrent_weights =
        TensorView{buffer.data(), DType::bf16, recurrent_weights_shape(info, shape).sizes()};
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr),
                         doctest::Contains("got [4, 2, 8, 8] bf16"), ShapeError);
    args.recurrent_weights = TensorView{buffer.data(), DType::fp32, {4, 2, 8, 8}, {128, 64, 16, 2}};
    CHECK_THROWS_WITH_AS(rnn::forward(problem, args, options, nullptr),
                         doctest::Contains("recurrent_weights must be dense row-major"), ShapeError);
    rnn::BackwardArgs backward_args{};
    backward_args.workspace = {ws.data(), needed};
    CHECK_THROWS_WITH_AS(rnn::backward(problem, backward_args, options, nullptr),
                         doctest::Contains("recurrent_weights is null"), ShapeError);
}

} // namespace flashrnn::testing
