// The Newton family on the GPU (newton/reduction.hpp, newton/passes.hpp) against the float64
// references (newton/reference.hpp), on fresh random data, outputs poisoned (NaN) before every run.
//  - newton::reduce exactly: Jacobian entries in {-1, +1} (2x2 blocks: signed permutations) and
//    right-hand sides signed unit vectors, or a single unit impulse at the start of the scan (it
//    crosses every segment of the grid level): every partial result is an integer below 2^24, so
//    fp32 must match bit for bit (bf16 solutions: the exact value rounded once). Lengths 1 .. 2^22
//    including odd and prime ones, diagonal and 2x2, forward and reverse, fp32 and bf16, few rows
//    (grid level) and many; in place (solution == rhs) and inside a CUDA graph.
//  - newton::reduce with random contracting Jacobians within the scans' tolerances per dtype.
//  - newton::forward (Newton, fused and sequential backends) against the float64 sequential forward:
//    fp32 1e-4, bf16 1e-2 relative to (1 + |value|), the paper's fresh initialisation (App. C.1)
//    and slow decay (|a| in [0.9, 1]) with a tolerance (the fused kernel's per tile, its statistics
//    against the unfused solver's, the iteration limit, inside a CUDA graph); statistics read from
//    the device slots.
//  - the sequential backend at every edge of its shared-memory tiles (sequences and steps).
//  - newton::backward (every backend; the fused one in every compiled configuration, with and without
//    the states' gradients, inside a CUDA graph) against the float64 backward at the same states.
//  - Bad input: wrong shapes, fp16, an iteration limit of 0, a small workspace, non-finite inputs.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton.hpp"
#include "newton_test_support.hpp"
#include "scan_test_support.hpp"

#ifdef FLASHRNN_WITH_CUDA // the kernels are part of the CUDA build only

using namespace flashrnn;
using namespace flashrnn::scan_testing;
using flashrnn::reference::Tensor;
using flashrnn::testing::compare;
using flashrnn::testing::count_of;
using flashrnn::testing::NewtonProblem;

namespace {

// ---- the reduction -----------------------------------------------------------------------------------

enum class Pattern { unit_vectors, impulse, contracting };

struct ReductionCase {
    newton::ReductionProblem problem;
    std::vector<double> jacobians, rhs; // [K, sequences, L], [N, sequences, L], rounded to the dtype
};

ReductionCase make_reduction(newton::ReductionProblem problem, Pattern pattern, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int n = newton::block_size(problem.structure);
    const auto sequences = static_cast<std::size_t>(problem.shape.sequences);
    const auto L = static_cast<std::size_t>(problem.shape.length);
    const std::size_t plane = sequences * L;
    ReductionCase c{problem, std::vector<double>(n * n * plane), std::vector<double>(n * plane, 0.0)};
    std::uniform_int_distribution<int> pick(0, 7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (std::size_t e = 0; e < plane; ++e) {
        if (pattern == Pattern::contracting) { // |row sums| <= 0.9
            for (int k = 0; k < n * n; ++k)
                c.jacobians[k * plane + e] = uniform(rng) * 0.9 / n;
            for (int i = 0; i < n; ++i)
                c.rhs[i * plane + e] = uniform(rng);
            continue;
        }
        const int k = pick(rng);
        const double first = (k & 1) ? -1.0 : 1.0, second = (k & 2) ? -1.0 : 1.0;
        if (n == 1) {
            c.jacobians[e] = first;
        } else { // a signed permutation: [[0, +-1], [+-1, 0]] or diagonal
            const bool swap = k & 4;
            c.jacobians[0 * plane + e] = swap ? 0.0 : first;
            c.jacobians[1 * plane + e] = swap ? first : 0.0;
            c.jacobians[2 * plane + e] = swap ? second : 0.0;
            c.jacobians[3 * plane + e] = swap ? 0.0 : second;
        }
        const std::size_t l = e % L;
        const std::size_t scan_start = problem.reverse ? L - 1 : 0;
        if (pattern == Pattern::unit_vectors)
            c.rhs[(pick(rng) % n) * plane + e] = (pick(rng) & 1) ? -1.0 : 1.0;
        else if (l == scan_start)
            c.rhs[(e / L) % n * plane + e] = 1.0; // the impulse: e_0 or e_1 by row
    }
    c.jacobians = rounded_to(problem.dtype, c.jacobians);
    c.rhs = rounded_to(problem.dtype, c.rhs);
    return c;
}

// Waits for `stream` at most a minute (each call here takes milliseconds): a kernel that never ends
// (a barrier that some threads of a block miss) ends the process with the call named, instead of
// hanging the GPU run until its time limit.
void wait_at_most_a_minute(cudaStream_t stream, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (cudaStreamQuery(stream) == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr, "test_newton: %s did not finish within a minute; exiting\n", what.c_str());
            std::_Exit(3);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    cuda_ok(cudaStreamSynchronize(stream), what.c_str());
}

// Runs launch(stream) on a fresh stream, directly or captured in a CUDA graph and replayed (what a
// call that synchronised the host could not be), and waits for it.
template <class F> void run_on_stream(bool in_graph, const std::string& what, F&& launch) {
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    if (!in_graph) {
        launch(stream);
    } else {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        launch(stream);
        cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
        cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
        cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
        wait_at_most_a_minute(stream, what + " (graph)");
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    wait_at_most_a_minute(stream, what);
    cudaStreamDestroy(stream);
}

// The reduction on the GPU: the solution, or with `in_place` the rhs buffer overwritten.
std::vector<double> reduce_on_gpu(const ReductionCase& c, bool in_place, bool in_graph) {
    const newton::ReductionProblem& problem = c.problem;
    const DeviceTensor jacobians(problem.dtype, c.jacobians);
    const DeviceTensor rhs(problem.dtype, c.rhs);
    DeviceTensor solution(problem.dtype, c.rhs.size());
    solution.poison();
    const std::size_t bytes = newton::reduce_workspace_bytes(problem);
    const DeviceTensor workspace(DType::fp32, (bytes + 3) / 4);
    const TensorView out = in_place ? rhs.view(newton::rhs_shape(problem).sizes())
                                    : solution.view(newton::rhs_shape(problem).sizes());
    const newton::ReductionArgs args{jacobians.view(newton::jacobians_shape(problem).sizes()),
                                     rhs.view(newton::rhs_shape(problem).sizes()), out,
                                     Workspace{workspace.data(), bytes}};
    run_on_stream(in_graph, "newton::reduce",
                  [&](cudaStream_t stream) { newton::reduce(problem, args, stream); });
    return in_place ? rhs.download() : solution.download();
}

std::vector<double> reduce_reference(const ReductionCase& c) {
    const Tensor x =
        reference::newton_reduce(c.problem, {c.jacobians, sizes_of(newton::jacobians_shape(c.problem))},
                                 {c.rhs, sizes_of(newton::rhs_shape(c.problem))});
    return rounded_to(c.problem.dtype, x.values);
}

std::string describe_case(const newton::ReductionProblem& p) {
    return std::string(p.structure == newton::JacobianStructure::block2x2 ? "2x2" : "diagonal") + " " +
           std::string(to_string(p.dtype)) + (p.reverse ? " reverse" : " forward") + ", " +
           std::to_string(p.shape.sequences) + " rows of " + std::to_string(p.shape.length);
}

void check_exact_reduction(const newton::ReductionProblem& problem, Pattern pattern, std::uint64_t seed,
                           bool in_place = false, bool in_graph = false) {
    const ReductionCase c = make_reduction(problem, pattern, seed);
    const std::int64_t first = first_difference(reduce_on_gpu(c, in_place, in_graph), reduce_reference(c));
    INFO(describe_case(problem) << (pattern == Pattern::impulse ? ", impulse" : ", unit vectors")
                                << (in_place ? ", in place" : "") << (in_graph ? ", in a graph" : "")
                                << ": first mismatch at " << first);
    CHECK(first == -1);
}

constexpr newton::JacobianStructure kStructures[] = {newton::JacobianStructure::diagonal,
                                                     newton::JacobianStructure::block2x2};
constexpr DType kDtypes[] = {DType::fp32, DType::bf16};

// ---- the solvers -------------------------------------------------------------------------------------

double tolerance_for(DType dtype) {
    return dtype == DType::bf16 ? 1e-2 : 1e-4;
}

// The largest residual (under the accurate activations) of the states that 3 iterations return. The
// fused kernel's bf16 states are solved with the hardware tanh in every iteration (its relative error
// up to 2^-11 per activation), since they are rounded to 2^-8 of their value: their fp32 iterate's
// residual is that error's, which stays below the rounding.
double residual_bound(newton::Backend backend, DType dtype) {
    if (backend == newton::Backend::sequential) return 0.0;
    return backend == newton::Backend::fused && dtype == DType::bf16 ? 0x1p-9 : 1e-5;
}

// A problem's inputs rounded to what the GPU reads (inputs in the dtype, the rest fp32).
NewtonProblem rounded(NewtonProblem p, DType dtype) {
    p.inputs = rounded_to(dtype, p.inputs);
    p.parameters = rounded_to(DType::fp32, p.parameters);
    p.initial_state = rounded_to(DType::fp32, p.initial_state);
    return p;
}

struct GpuForward {
    std::vector<double> states, last_state, statistics;
};

GpuForward forward_on_gpu(const NewtonProblem& p, DType dtype, const newton::Options& options,
                          bool in_graph = false) {
    const newton::Problem problem{p.cell, dtype, p.shape};
    const newton::CellInfo info = p.info();
    const DeviceTensor inputs(dtype, p.inputs), parameters(DType::fp32, p.parameters);
    const DeviceTensor h0(DType::fp32, p.initial_state.empty() ? std::vector<double>{0.0} : p.initial_state);
    DeviceTensor states(dtype,
                        static_cast<std::size_t>(count_of(newton::state_sequence_shape(info, p.shape))));
    DeviceTensor last(DType::fp32, static_cast<std::size_t>(count_of(newton::state_shape(info, p.shape))));
    DeviceTensor statistics(DType::fp32, newton::kStatisticsElements);
    const std::size_t bytes = newton::forward_workspace_bytes(problem, options);
    const DeviceTensor workspace(DType::fp32, (bytes + 3) / 4);
    states.poison();
    last.poison();
    statistics.poison();
    const newton::ForwardArgs args{inputs.view(newton::inputs_shape(info, p.shape).sizes()),
                                   parameters.view(newton::parameters_shape(info, p.shape).sizes()),
                                   p.initial_state.empty()
                                       ? ConstTensorView{}
                                       : ConstTensorView{h0.view(newton::state_shape(info, p.shape).sizes())},
                                   states.view(newton::state_sequence_shape(info, p.shape).sizes()),
                                   last.view(newton::state_shape(info, p.shape).sizes()),
                                   statistics.view({newton::kStatisticsElements}),
                                   Workspace{workspace.data(), bytes}};
    const std::string what = "newton::forward(" + std::string(newton::to_string(p.cell)) + ", " +
                             std::string(to_string(dtype)) + ", " + newton::to_string(p.shape) + ", " +
                             std::string(newton::to_string(options.backend)) + ", " +
                             std::to_string(options.max_iterations) + " iterations" +
                             (options.tolerance ? ", a tolerance" : "") + ")";
    run_on_stream(in_graph, what,
                  [&](cudaStream_t stream) { newton::forward(problem, args, options, stream); });
    return {states.download(), last.download(), statistics.download()};
}

newton::Options with_backend(newton::Backend backend, int iterations = 3) {
    newton::Options options;
    options.backend = backend;
    options.max_iterations = iterations;
    return options;
}

void check_close(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
                 double tolerance) {
    const Mismatch worst = worst_mismatch(got, want, tolerance);
    INFO(what << ": " << describe(worst));
    CHECK(worst.index == -1);
}

constexpr newton::Backend kBackends[] = {newton::Backend::newton, newton::Backend::sequential,
                                         newton::Backend::fused};

struct GpuGradients {
    std::vector<double> d_inputs, d_parameters, d_initial_state;
};

// The backward at the given states (already rounded to the dtype), upstream gradients random (no
// d_states when `d_states_values` is empty: zero); every output poisoned before the run.
GpuGradients backward_on_gpu(const NewtonProblem& p, DType dtype, const std::vector<double>& states_values,
                             const std::vector<double>& d_states_values,
                             const std::vector<double>& d_last_values, const newton::Options& options,
                             bool in_graph = false) {
    const newton::Problem problem{p.cell, dtype, p.shape};
    const newton::CellInfo info = p.info();
    const DeviceTensor inputs(dtype, p.inputs), parameters(DType::fp32, p.parameters);
    const DeviceTensor h0(DType::fp32, p.initial_state);
    const DeviceTensor states(dtype, states_values);
    const DeviceTensor d_states(dtype, d_states_values.empty() ? std::vector<double>{0.0} : d_states_values);
    const DeviceTensor d_last(DType::fp32, d_last_values);
    DeviceTensor d_inputs(dtype, p.inputs.size()), d_parameters(DType::fp32, p.parameters.size());
    DeviceTensor d_h0(DType::fp32, p.initial_state.size());
    d_inputs.poison();
    d_parameters.poison();
    d_h0.poison();
    const std::size_t bytes = newton::backward_workspace_bytes(problem, options);
    const DeviceTensor workspace(DType::fp32, (bytes + 3) / 4);
    const auto sequence = newton::state_sequence_shape(info, p.shape).sizes();
    const auto state = newton::state_shape(info, p.shape).sizes();
    const newton::BackwardArgs args{inputs.view(newton::inputs_shape(info, p.shape).sizes()),
                                    parameters.view(newton::parameters_shape(info, p.shape).sizes()),
                                    h0.view(state),
                                    states.view(sequence),
                                    d_states_values.empty() ? ConstTensorView{}
                                                            : ConstTensorView{d_states.view(sequence)},
                                    d_last.view(state),
                                    d_inputs.view(newton::inputs_shape(info, p.shape).sizes()),
                                    d_parameters.view(newton::parameters_shape(info, p.shape).sizes()),
                                    d_h0.view(state),
                                    Workspace{workspace.data(), bytes}};
    const std::string what = "newton::backward(" + std::string(newton::to_string(p.cell)) + ", " +
                             std::string(to_string(dtype)) + ", " + newton::to_string(p.shape) + ", " +
                             std::string(newton::to_string(options.backend)) + ")";
    run_on_stream(in_graph, what,
                  [&](cudaStream_t stream) { newton::backward(problem, args, options, stream); });
    return {d_inputs.download(), d_parameters.download(), d_h0.download()};
}

// A backward case: a problem (fresh initialisation), its float64 sequential states rounded to the
// dtype, random upstream gradients (none for the states when `with_d_states` is false) and the
// float64 backward at those states.
struct BackwardCase {
    NewtonProblem problem;
    std::vector<double> states, d_states, d_last;
    reference::NewtonGradients want;
};

BackwardCase make_backward_case(newton::Cell cell, DType dtype, newton::Shape shape, std::uint64_t& seed,
                                bool with_d_states = true) {
    NewtonProblem p = testing::random_newton_problem(cell, shape, ++seed, 0.0, 1.0, true);
    testing::fresh_initialisation(p, ++seed);
    p = rounded(p, dtype);
    const newton::CellInfo info = p.info();
    std::mt19937_64 rng(++seed);
    BackwardCase c{p, rounded_to(dtype, p.sequential().states.values), {}, {}, {}};
    const auto sequence = newton::state_sequence_shape(info, p.shape);
    if (with_d_states) c.d_states = rounded_to(dtype, random_magnitudes(count_of(sequence), 0.0, 1.0, rng));
    c.d_last = rounded_to(DType::fp32,
                          random_magnitudes(count_of(newton::state_shape(info, p.shape)), 0.0, 1.0, rng));
    const std::vector<double> zero_d_states(static_cast<std::size_t>(count_of(sequence)), 0.0);
    c.want = reference::newton_backward(
        cell, p.shape,
        {p.view(),
         {c.states, sizes_of(sequence)},
         ConstHostView{with_d_states ? c.d_states : zero_d_states, sizes_of(sequence)},
         ConstHostView{c.d_last, sizes_of(newton::state_shape(info, p.shape))}});
    return c;
}

void check_gradients(const GpuGradients& got, const reference::NewtonGradients& want, double tolerance) {
    const auto d_inputs = compare(got.d_inputs, want.d_inputs.values, {tolerance, tolerance});
    CHECK_MESSAGE(d_inputs.ok, d_inputs.describe("d_inputs"));
    const auto d_parameters = compare(got.d_parameters, want.d_parameters.values, {tolerance, tolerance});
    CHECK_MESSAGE(d_parameters.ok, d_parameters.describe("d_parameters"));
    const auto d_h0 = compare(got.d_initial_state, want.d_initial_state.values, {tolerance, tolerance});
    CHECK_MESSAGE(d_h0.ok, d_h0.describe("d_initial_state"));
}

} // namespace

// ---- reduction tests -----------------------------------------------------------------------------------

TEST_CASE("newton reduce small: exact, short rows, every structure, dtype and direction") {
    std::uint64_t seed = 16000;
    for (newton::JacobianStructure structure : kStructures)
        for (DType dtype : kDtypes)
            for (bool reverse : {false, true})
                for (std::int64_t length : {1, 2, 3, 31, 32, 33, 127, 257, 1021, 4093})
                    for (Pattern pattern : {Pattern::unit_vectors, Pattern::impulse})
                        check_exact_reduction({dtype, structure, {3, length}, reverse}, pattern, ++seed);
}

TEST_CASE("newton reduce small: in place and captured in a CUDA graph (grid level)") {
    std::uint64_t seed = 16100;
    for (newton::JacobianStructure structure : kStructures)
        for (bool reverse : {false, true}) {
            const newton::ReductionProblem problem{DType::fp32, structure, {2, 65537}, reverse};
            REQUIRE(newton::reduce_workspace_bytes(problem) > 0); // segments: the grid level runs
            check_exact_reduction(problem, Pattern::unit_vectors, ++seed, true, false);
            check_exact_reduction(problem, Pattern::impulse, ++seed, false, true);
        }
}

TEST_CASE("newton reduce: exact over lengths up to 2^22 (grid level), few and many rows") {
    std::uint64_t seed = 16200;
    for (newton::JacobianStructure structure : kStructures)
        for (DType dtype : kDtypes)
            for (bool reverse : {false, true}) {
                for (std::int64_t length : {8191LL, 65537LL, 131071LL, 1LL << 20})
                    for (Pattern pattern : {Pattern::unit_vectors, Pattern::impulse})
                        check_exact_reduction({dtype, structure, {2, length}, reverse}, pattern, ++seed);
                check_exact_reduction({dtype, structure, {1, 1 << 22}, reverse}, Pattern::impulse, ++seed);
                check_exact_reduction({dtype, structure, {1, (1 << 22) - 3}, reverse}, Pattern::unit_vectors,
                                      ++seed);
                check_exact_reduction({dtype, structure, {1500, 4097}, reverse}, Pattern::unit_vectors,
                                      ++seed);
            }
}

TEST_CASE("newton reduce small: random contracting Jacobians within the dtype's tolerance") {
    std::uint64_t seed = 16300;
    for (newton::JacobianStructure structure : kStructures)
        for (DType dtype : kDtypes)
            for (bool reverse : {false, true})
                for (std::int64_t length : {1, 33, 4099, 65537}) {
                    const ReductionCase c = make_reduction({dtype, structure, {5, length}, reverse},
                                                           Pattern::contracting, ++seed);
                    const Mismatch worst = worst_mismatch(reduce_on_gpu(c, false, false), reduce_reference(c),
                                                          tolerance_of(dtype));
                    INFO(describe_case(c.problem) << ": " << describe(worst));
                    CHECK(worst.index == -1);
                }
}

TEST_CASE("newton reduce small: bad arguments are refused before any launch") {
    const newton::ReductionProblem problem{
        DType::fp32, newton::JacobianStructure::block2x2, {2, 100000}, false};
    const DeviceTensor jacobians(DType::fp32, 4 * 2 * 100000), rhs(DType::fp32, 2 * 2 * 100000);
    const newton::ReductionArgs good{jacobians.view({4, 2, 100000}), rhs.view({2, 2, 100000}),
                                     rhs.view({2, 2, 100000}), Workspace{}};
    REQUIRE(newton::reduce_workspace_bytes(problem) > 0);
    CHECK_THROWS_WITH_AS(newton::reduce(problem, good, nullptr),
                         doctest::Contains("the workspace holds 0 bytes"), ShapeError);
    newton::ReductionArgs bad = good;
    bad.jacobians = jacobians.view({1, 8, 100000});
    CHECK_THROWS_WITH_AS(newton::reduce(problem, bad, nullptr), doctest::Contains("jacobians: expected"),
                         ShapeError);
    newton::ReductionProblem half = problem;
    half.dtype = DType::fp16;
    CHECK_THROWS_AS(newton::reduce(half, good, nullptr), UnsupportedError);
    newton::ReductionProblem empty = problem;
    empty.shape.length = 0;
    CHECK_THROWS_AS(newton::reduce(empty, good, nullptr), ShapeError);
}

// ---- solver tests --------------------------------------------------------------------------------------

TEST_CASE(
    "newton forward small: both backends against the float64 sequential forward (fresh initialisation)") {
    std::uint64_t seed = 16400;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {1, 2, 33, 257, 4099, 65537})
                for (bool with_h0 : {false, true}) {
                    NewtonProblem p =
                        testing::random_newton_problem(cell, {T, 2, 5}, ++seed, 0.0, 1.0, with_h0);
                    testing::fresh_initialisation(p, ++seed);
                    p = rounded(p, dtype);
                    const reference::NewtonForwardResult want = p.sequential();
                    for (newton::Backend backend : kBackends) {
                        INFO(newton::to_string(cell)
                             << " " << to_string(dtype) << " T=" << T << (with_h0 ? " h0" : "") << " "
                             << newton::to_string(backend));
                        const GpuForward got = forward_on_gpu(p, dtype, with_backend(backend));
                        check_close("states", got.states, rounded_to(dtype, want.states.values),
                                    tolerance_for(dtype));
                        check_close("last_state", got.last_state, want.last_state.values,
                                    tolerance_for(dtype));
                        const bool newton_backend = backend != newton::Backend::sequential;
                        CHECK(got.statistics[newton::iterations_slot] == (newton_backend ? 3.0 : 0.0));
                        CHECK(got.statistics[newton::max_residual_slot] <= residual_bound(backend, dtype));
                        CHECK(got.statistics[newton::tolerance_met_slot] == 0.0);
                        CHECK(got.statistics[newton::non_finite_slot] == 0.0);
                    }
                }
}

TEST_CASE("newton forward: long sequences (grid level) and many rows") {
    std::uint64_t seed = 16500;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (newton::Shape shape : {newton::Shape{1 << 20, 1, 2}, newton::Shape{1021, 7, 300}}) {
                NewtonProblem p = testing::random_newton_problem(cell, shape, ++seed, 0.0, 1.0, true);
                testing::fresh_initialisation(p, ++seed);
                p = rounded(p, dtype);
                const reference::NewtonForwardResult want = p.sequential();
                for (newton::Backend backend : {newton::Backend::newton, newton::Backend::fused}) {
                    INFO(newton::to_string(cell) << " " << to_string(dtype) << " " << newton::to_string(shape)
                                                 << " " << newton::to_string(backend));
                    const GpuForward got = forward_on_gpu(p, dtype, with_backend(backend));
                    check_close("states", got.states, rounded_to(dtype, want.states.values),
                                tolerance_for(dtype));
                    check_close("last_state", got.last_state, want.last_state.values, tolerance_for(dtype));
                    CHECK(got.statistics[newton::non_finite_slot] == 0.0);
                }
            }
}

// The fused forward's tiles: lengths around one tile and many tiles of every compiled configuration's
// size (odd and prime), odd batch x units, slow decay (|a| close to 1: the state entering a tile matters).
TEST_CASE("newton forward small: fused, odd and prime lengths, odd batch x units, slow decay") {
    std::uint64_t seed = 16550;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {3, 127, 129, 2047, 2053, 4099, 8191, 30011})
                for (double decay : {0.0, 0.9}) {
                    NewtonProblem p =
                        testing::random_newton_problem(cell, {T, 3, 7}, ++seed, decay, 1.0, true);
                    if (decay == 0.0) testing::fresh_initialisation(p, ++seed);
                    p = rounded(p, dtype);
                    const reference::NewtonForwardResult want = p.sequential();
                    INFO(newton::to_string(cell)
                         << " " << to_string(dtype) << " T=" << T << " decay " << decay);
                    // Slow decay needs more iterations (as for the unfused solver's tolerance test).
                    const int iterations = decay > 0.0 ? 40 : 3;
                    const GpuForward got =
                        forward_on_gpu(p, dtype, with_backend(newton::Backend::fused, iterations));
                    check_close("states", got.states, rounded_to(dtype, want.states.values),
                                tolerance_for(dtype));
                    check_close("last_state", got.last_state, want.last_state.values, tolerance_for(dtype));
                    CHECK(got.statistics[newton::iterations_slot] == iterations);
                    CHECK(got.statistics[newton::non_finite_slot] == 0.0);
                }
}

// Small enough for compute-sanitizer: several warps and tiles per sequence, a partial last tile, with
// and without a tolerance (its block-wide maxima go through shared memory).
TEST_CASE("newton fused sanitizer case: several tiles, both cells and dtypes") {
    std::uint64_t seed = 16570;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes) {
            NewtonProblem p = testing::random_newton_problem(cell, {5003, 2, 3}, ++seed, 0.0, 1.0, true);
            testing::fresh_initialisation(p, ++seed);
            p = rounded(p, dtype);
            const reference::NewtonForwardResult want = p.sequential();
            for (bool tolerance : {false, true}) {
                INFO(newton::to_string(cell) << " " << to_string(dtype) << (tolerance ? ", tolerance" : ""));
                newton::Options options = with_backend(newton::Backend::fused, tolerance ? 10 : 3);
                if (tolerance) options.tolerance = newton::Tolerance{1e-6, 0.0};
                const GpuForward got = forward_on_gpu(p, dtype, options);
                check_close("states", got.states, rounded_to(dtype, want.states.values),
                            tolerance_for(dtype));
                if (tolerance) CHECK(got.statistics[newton::tolerance_met_slot] == 1.0);
            }
        }
}

// The fused forward's worst error in fp32 (the kernel's activations are approximations: the hardware
// tanh in early iterations, exp and a reciprocal in the last), printed so that a change of the cell
// evaluation can be compared, and held to the stated tolerance; the residual statistic is the one of
// the returned states under the accurate activations.
TEST_CASE("newton fused accuracy: worst fp32 error against float64, fresh initialisation and slow decay") {
    std::uint64_t seed = 16580;
    for (newton::Cell cell : newton::all_cells)
        for (double decay : {0.0, 0.9}) {
            NewtonProblem p = testing::random_newton_problem(cell, {8191, 4, 64}, ++seed, decay, 1.0, true);
            if (decay == 0.0) testing::fresh_initialisation(p, ++seed);
            p = rounded(p, DType::fp32);
            const reference::NewtonForwardResult want = p.sequential();
            const int iterations = decay > 0.0 ? 40 : 3;
            const GpuForward got =
                forward_on_gpu(p, DType::fp32, with_backend(newton::Backend::fused, iterations));
            double worst = 0;
            for (std::size_t i = 0; i < want.states.values.size(); ++i)
                worst = std::max(worst, std::abs(got.states[i] - want.states.values[i]) /
                                            (1 + std::abs(want.states.values[i])));
            MESSAGE(newton::to_string(cell)
                    << " decay " << decay << ", " << iterations
                    << " iterations: worst |error| / (1 + |value|) " << worst << ", max residual "
                    << got.statistics[newton::max_residual_slot]);
            CHECK(worst <= tolerance_for(DType::fp32));
        }
}

newton::Options with_tolerance(newton::Backend backend, int max_iterations, newton::Tolerance tolerance) {
    newton::Options options = with_backend(backend, max_iterations);
    options.tolerance = tolerance;
    return options;
}

// The fused kernel with a tolerance: each tile iterates until its residual meets it. Against the float64
// sequential forward at the dtype's tolerance, lengths of one tile and of many (odd and prime), the fresh
// initialisation and slow decay (|a| in [0.9, 1] and [0.99, 1]: many iterations), absolute and relative
// tolerances. Within one tile the fused kernel runs the unfused solver's algorithm: the same
// iterations (the residual falls by orders of magnitude per iteration near the solution, so the fp32
// activations of the two kernels do not move the stop), both tolerances met. Over several tiles it
// stops per tile: its most iterations are those of its slowest tile, not those of the whole sequence.
TEST_CASE("newton forward small: fused with a tolerance against float64 and the unfused statistics") {
    std::uint64_t seed = 16590;
    const DeviceLimits limits = device_limits_of(0);
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {1, 3, 127, 2047, 2053, 8191, 30011})
                for (double decay : {0.0, 0.9, 0.99})
                    for (newton::Tolerance tolerance :
                         {newton::Tolerance{1e-5, 0.0}, newton::Tolerance{0.0, 1e-5}}) {
                        NewtonProblem p =
                            testing::random_newton_problem(cell, {T, 3, 7}, ++seed, decay, 1.0, true);
                        if (decay == 0.0) testing::fresh_initialisation(p, ++seed);
                        p = rounded(p, dtype);
                        const reference::NewtonForwardResult want = p.sequential();
                        const newton::Problem problem{cell, dtype, p.shape};
                        const ScanConfig config = newton::fused_config(limits, problem);
                        const bool one_tile =
                            T <= std::int64_t{config.elements_per_thread} * config.threads_per_block;
                        INFO(newton::to_string(cell)
                             << " " << to_string(dtype) << " T=" << T << " decay " << decay << " tolerance "
                             << tolerance.absolute << " + " << tolerance.relative << " max|h|, "
                             << describe(config));
                        const GpuForward got =
                            forward_on_gpu(p, dtype, with_tolerance(newton::Backend::fused, 60, tolerance));
                        const GpuForward unfused =
                            forward_on_gpu(p, dtype, with_tolerance(newton::Backend::newton, 60, tolerance));
                        check_close("states", got.states, rounded_to(dtype, want.states.values),
                                    tolerance_for(dtype));
                        check_close("last_state", got.last_state, want.last_state.values,
                                    tolerance_for(dtype));
                        CHECK(got.statistics[newton::tolerance_met_slot] == 1.0);
                        CHECK(got.statistics[newton::non_finite_slot] == 0.0);
                        CHECK(got.statistics[newton::iterations_slot] <= 60.0);
                        CHECK(got.statistics[newton::iterations_slot] >= (T > 1 ? 1.0 : 0.0));
                        const double largest_state =
                            1.0; // |h| <= 1 for both cells (tanh and gates in (0, 1))
                        CHECK(got.statistics[newton::max_residual_slot] <=
                              tolerance.absolute + tolerance.relative * largest_state);
                        CHECK(unfused.statistics[newton::tolerance_met_slot] == 1.0);
                        if (one_tile)
                            CHECK(got.statistics[newton::iterations_slot] ==
                                  unfused.statistics[newton::iterations_slot]);
                    }
}

// With too few iterations for the tolerance: both backends stop at the limit and say it was not met; the
// residual reported is that of the returned states (the last evaluation's), above the tolerance.
TEST_CASE("newton forward small: fused with a tolerance stops at the iteration limit") {
    std::uint64_t seed = 16595;
    for (newton::Cell cell : newton::all_cells)
        for (std::int64_t T : {2047, 5003}) {
            NewtonProblem p = testing::random_newton_problem(cell, {T, 2, 5}, ++seed, 0.99, 1.0, true);
            p = rounded(p, DType::fp32);
            for (newton::Backend backend : {newton::Backend::fused, newton::Backend::newton})
                for (int limit : {1, 2}) {
                    INFO(newton::to_string(cell)
                         << " T=" << T << " " << newton::to_string(backend) << ", limit " << limit);
                    const GpuForward got =
                        forward_on_gpu(p, DType::fp32, with_tolerance(backend, limit, {1e-9, 0.0}));
                    CHECK(got.statistics[newton::iterations_slot] == limit);
                    CHECK(got.statistics[newton::tolerance_met_slot] == 0.0);
                    CHECK(got.statistics[newton::max_residual_slot] > 1e-9);
                    CHECK(std::isfinite(got.statistics[newton::max_residual_slot]));
                    CHECK(got.statistics[newton::non_finite_slot] == 0.0);
                }
        }
}

// Captured in a CUDA graph (the tolerance decided on the device, no host synchronisation): the same
// states and statistics as the direct call.
TEST_CASE("newton forward small: fused with a tolerance inside a CUDA graph") {
    for (newton::Cell cell : newton::all_cells) {
        NewtonProblem p = testing::random_newton_problem(cell, {4099, 3, 5}, 16597, 0.9, 1.0, true);
        p = rounded(p, DType::fp32);
        const newton::Options options = with_tolerance(newton::Backend::fused, 40, {1e-6, 0.0});
        const GpuForward direct = forward_on_gpu(p, DType::fp32, options);
        const GpuForward captured = forward_on_gpu(p, DType::fp32, options, true);
        INFO(newton::to_string(cell));
        CHECK(first_difference(captured.states, direct.states) == -1);
        CHECK(first_difference(captured.statistics, direct.statistics) == -1);
        CHECK(direct.statistics[newton::tolerance_met_slot] == 1.0);
    }
}

TEST_CASE("newton forward small: slow decay, stopped by a tolerance") {
    std::uint64_t seed = 16600;
    for (newton::Cell cell : newton::all_cells) {
        NewtonProblem p = testing::random_newton_problem(cell, {3001, 2, 6}, ++seed, 0.9, 1.0, true);
        p = rounded(p, DType::fp32);
        const reference::NewtonForwardResult want = p.sequential();
        newton::Options options = with_backend(newton::Backend::newton, 40);
        options.tolerance = newton::Tolerance{1e-5, 0.0};
        INFO(newton::to_string(cell));
        const GpuForward got = forward_on_gpu(p, DType::fp32, options);
        check_close("states", got.states, want.states.values, 1e-3);
        CHECK(got.statistics[newton::tolerance_met_slot] == 1.0);
        CHECK(got.statistics[newton::iterations_slot] >= 1.0);
        CHECK(got.statistics[newton::iterations_slot] < 40.0);
        CHECK(got.statistics[newton::max_residual_slot] <= 1e-5);
    }
}

TEST_CASE("newton forward small: a non-finite input sets the flag, without a host synchronisation") {
    for (newton::Cell cell : newton::all_cells)
        for (newton::Backend backend : kBackends) {
            NewtonProblem p = testing::random_newton_problem(cell, {40, 2, 3}, 16700, 0.0, 0.5, false);
            p.inputs[17] = NAN;
            INFO(newton::to_string(cell) << " " << newton::to_string(backend));
            const GpuForward got = forward_on_gpu(p, DType::fp32, with_backend(backend));
            CHECK(got.statistics[newton::non_finite_slot] == 1.0);
            if (backend == newton::Backend::sequential) continue;
            // A non-finite residual never meets a tolerance.
            const GpuForward stopped =
                forward_on_gpu(p, DType::fp32, with_tolerance(backend, 10, {1e-5, 0.0}));
            CHECK(stopped.statistics[newton::non_finite_slot] == 1.0);
            CHECK(stopped.statistics[newton::tolerance_met_slot] == 0.0);
        }
}

TEST_CASE("newton backward small: every backend against the float64 backward") {
    std::uint64_t seed = 16800;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {1, 2, 33, 4099, 65537}) {
                const BackwardCase c = make_backward_case(cell, dtype, {T, 2, 5}, seed);
                for (newton::Backend backend : kBackends) {
                    INFO(newton::to_string(cell)
                         << " " << to_string(dtype) << " T=" << T << " " << newton::to_string(backend));
                    check_gradients(backward_on_gpu(c.problem, dtype, c.states, c.d_states, c.d_last,
                                                    with_backend(backend)),
                                    c.want, tolerance_for(dtype));
                }
            }
}

// The sequential backend on one shape, forward (with and without an initial state) and backward
// (with and without the states' gradients), against the float64 references.
void check_sequential(newton::Cell cell, DType dtype, newton::Shape shape, std::uint64_t& seed) {
    const newton::Options options = with_backend(newton::Backend::sequential);
    for (bool with_h0 : {false, true}) {
        NewtonProblem p = testing::random_newton_problem(cell, shape, ++seed, 0.0, 1.0, with_h0);
        testing::fresh_initialisation(p, ++seed);
        p = rounded(p, dtype);
        const reference::NewtonForwardResult want = p.sequential();
        INFO("forward" << (with_h0 ? ", h0" : ""));
        const GpuForward got = forward_on_gpu(p, dtype, options);
        check_close("states", got.states, rounded_to(dtype, want.states.values), tolerance_for(dtype));
        check_close("last_state", got.last_state, want.last_state.values, tolerance_for(dtype));
        CHECK(got.statistics[newton::non_finite_slot] == 0.0);
    }
    for (bool with_d_states : {true, false}) {
        INFO("backward" << (with_d_states ? "" : ", no d_states"));
        const BackwardCase c = make_backward_case(cell, dtype, shape, seed, with_d_states);
        check_gradients(backward_on_gpu(c.problem, dtype, c.states, c.d_states, c.d_last, options), c.want,
                        tolerance_for(dtype));
    }
}

// The sequential kernels stage tiles of 32 sequences x 32 steps forward, 16 backward, through
// shared memory: sequence counts and lengths at every edge of a tile (one short, whole, one over, many
// tiles), odd lengths (16-bit rows that do not start at 4 bytes are copied value by value).
TEST_CASE("newton sequential small: every edge of the staged tiles, forward and backward") {
    std::uint64_t seed = 17000;
    const std::pair<std::int64_t, std::int64_t> batch_units[] = {{1, 1},  {1, 31}, {4, 8},
                                                                 {3, 11}, {5, 13}, {1, 97}};
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (auto [B, D] : batch_units)
                for (std::int64_t T : {1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129}) {
                    INFO(newton::to_string(cell)
                         << " " << to_string(dtype) << " T=" << T << " B=" << B << " D=" << D);
                    check_sequential(cell, dtype, {T, B, D}, seed);
                }
}

// The sequential kernels under compute-sanitizer (tests/gpu/scan.sh): partial tiles of sequences and
// steps, both copy paths (even and odd lengths), both cells and dtypes.
TEST_CASE("newton sequential sanitizer case: partial tiles, both cells and dtypes") {
    std::uint64_t seed = 17050;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {70, 71}) {
                INFO(newton::to_string(cell) << " " << to_string(dtype) << " T=" << T);
                check_sequential(cell, dtype, {T, 3, 15}, seed);
            }
}

// The fused backward in every compiled block configuration (kNewtonFusedDomains): prime lengths of one
// tile and of many (the carry between tiles, the identity past the end of a partial tile), an odd
// batch x units, with and without the states' gradients.
TEST_CASE("newton fused backward small: every configuration, prime lengths, with and without d_states") {
    std::uint64_t seed = 17100;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (std::int64_t T : {1, 31, 257, 5003})
                for (bool with_d_states : {true, false}) {
                    const BackwardCase c = make_backward_case(cell, dtype, {T, 3, 7}, seed, with_d_states);
                    for (int elements : kNewtonFusedDomains.elements_per_thread)
                        for (int threads : kNewtonFusedDomains.threads_per_block) {
                            INFO(newton::to_string(cell)
                                 << " " << to_string(dtype) << " T=" << T << " " << elements << " x "
                                 << threads << (with_d_states ? "" : ", no d_states"));
                            newton::Options options = with_backend(newton::Backend::fused);
                            options.fused_config = ScanConfig{elements, threads, ScanAccess::shared};
                            check_gradients(
                                backward_on_gpu(c.problem, dtype, c.states, c.d_states, c.d_last, options),
                                c.want, tolerance_for(dtype));
                        }
                }
}

// The fused backward under compute-sanitizer (tests/gpu/scan.sh runs this case): several tiles and
// warps per block, both cells and dtypes, and inside a CUDA graph (no host synchronisation).
TEST_CASE("newton fused sanitizer case: the backward, several tiles, both cells and dtypes") {
    std::uint64_t seed = 17300;
    for (newton::Cell cell : newton::all_cells)
        for (DType dtype : kDtypes)
            for (bool in_graph : {false, true}) {
                INFO(newton::to_string(cell) << " " << to_string(dtype) << (in_graph ? ", in a graph" : ""));
                const BackwardCase c = make_backward_case(cell, dtype, {2 * 1024 + 77, 2, 3}, seed);
                newton::Options options = with_backend(newton::Backend::fused);
                options.fused_config = ScanConfig{4, 128, ScanAccess::shared};
                check_gradients(
                    backward_on_gpu(c.problem, dtype, c.states, c.d_states, c.d_last, options, in_graph),
                    c.want, tolerance_for(dtype));
            }
}

TEST_CASE("newton forward small: bad input is refused before any launch") {
    NewtonProblem p =
        testing::random_newton_problem(newton::Cell::flash_lstm, {5, 2, 4}, 16900, 0.0, 0.5, false);
    const newton::Problem problem{p.cell, DType::bf16, p.shape};
    const newton::CellInfo info = p.info();
    const DeviceTensor inputs(DType::bf16, p.inputs), parameters(DType::fp32, p.parameters);
    const DeviceTensor states(
        DType::bf16, static_cast<std::size_t>(count_of(newton::state_sequence_shape(info, p.shape))));
    const newton::Options newton_options = with_backend(newton::Backend::newton);
    const newton::ForwardArgs good{inputs.view(newton::inputs_shape(info, p.shape).sizes()),
                                   parameters.view(newton::parameters_shape(info, p.shape).sizes()),
                                   {},
                                   states.view(newton::state_sequence_shape(info, p.shape).sizes()),
                                   {},
                                   {},
                                   {}};
    REQUIRE(newton::forward_workspace_bytes(problem, newton_options) > 0);
    CHECK_THROWS_WITH_AS(newton::forward(problem, good, newton_options, nullptr),
                         doctest::Contains("flashrnn::newton::forward: the workspace holds 0 bytes"),
                         ShapeError);
    newton::ForwardArgs bad = good;
    bad.inputs = inputs.view({3, 2, 5, 4});
    CHECK_THROWS_WITH_AS(
        newton::forward(problem, bad, newton_options, nullptr),
        "flashrnn::newton::forward(flash_lstm, bf16): inputs: expected [G=3, B=2, D=4, T=5] bf16, "
        "got [3, 2, 5, 4] bf16",
        ShapeError);
    newton::Options zero = newton_options;
    zero.max_iterations = 0;
    CHECK_THROWS_WITH_AS(newton::forward(problem, good, zero, nullptr),
                         "flashrnn::newton::forward: the iteration limit must be at least 1, got 0",
                         ShapeError);
    newton::Problem half = problem;
    half.dtype = DType::fp16;
    CHECK_THROWS_AS(newton::forward(half, good, newton_options, nullptr), UnsupportedError);
    newton::Problem too_long = problem;
    too_long.shape.time_steps = kMaxScanLength + 1;
    CHECK_THROWS_WITH_AS(newton::forward(too_long, good, newton_options, nullptr),
                         doctest::Contains("the number of time steps must be in [1, 2147483647]"),
                         ShapeError);
}

#endif // FLASHRNN_WITH_CUDA
