#include "flashrnn/tiling/scan_launch.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/core/tensor_size.hpp"

#include <constrint/constrint.hpp>

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "tiling/memo.hpp"
#include "tiling/solve_or_explain.hpp"

namespace flashrnn {

using constrint::Integer;

namespace {

// The model's domains: the compiled configurations of each kernel.
struct Domains {
    std::vector<Integer> elements_per_thread, threads_per_block, accesses;
};

template <class D> Domains domains_of(const D& d) {
    Domains out;
    for (int e : d.elements_per_thread)
        out.elements_per_thread.push_back(e);
    for (int t : d.threads_per_block)
        out.threads_per_block.push_back(t);
    for (ScanAccess a : d.accesses)
        out.accesses.push_back(static_cast<int>(a));
    return out;
}

Domains domains_of(ScanKernel kernel) {
    switch (kernel) {
    case ScanKernel::linrec_forward:
    case ScanKernel::linrec_backward:
        return domains_of(kLinrecDomains);
    case ScanKernel::rglru_forward:
    case ScanKernel::rglru_backward:
        return domains_of(kRglruDomains);
    case ScanKernel::newton_reduce_diagonal:
    case ScanKernel::newton_reduce_2x2:
        return domains_of(kNewtonReduceDomains);
    case ScanKernel::newton_fused_gru:
    case ScanKernel::newton_fused_lstm:
    case ScanKernel::newton_fused_backward_gru:
    case ScanKernel::newton_fused_backward_lstm:
        return domains_of(kNewtonFusedDomains);
    }
    throw ShapeError("flashrnn: invalid ScanKernel " + std::to_string(static_cast<int>(kernel)));
}

bool is_fused_newton_backward(ScanKernel kernel) {
    return kernel == ScanKernel::newton_fused_backward_gru ||
           kernel == ScanKernel::newton_fused_backward_lstm;
}

bool is_fused_newton(ScanKernel kernel) {
    return kernel == ScanKernel::newton_fused_gru || kernel == ScanKernel::newton_fused_lstm ||
           is_fused_newton_backward(kernel);
}

// Registers a thread needs, estimated from what it holds: two tiles of raw loads (the one being
// unpacked and the next one, issued right after) and about four fp32 values per element (map, state,
// saved values), plus a base. Vector access, and shared access of 16-bit elements (staged as
// packed words), keep 16-bit elements two to a register; element-wise loads take a register each.
// Checked against ptxas' report (-Xptxas -v) and ncu for the compiled kernels (bf16 16 x 32 shared:
// linrec forward 72, backward 119; estimates 128 and 144): an overestimate keeps the solver away
// from configurations that would spill.
Integer register_estimate_base() {
    return 32;
}

int values_per_element_of(ScanKernel kernel) {
    switch (kernel) {
    case ScanKernel::newton_reduce_2x2:
        return 9;
    case ScanKernel::newton_fused_gru:
        return 3 + 1 + 2 + 1;
    case ScanKernel::newton_fused_lstm:
        return 3 + 2 + 6 + 2;
    // The fused backward: the inputs, the states and their gradients, the map, u and the inputs' gradients.
    case ScanKernel::newton_fused_backward_gru:
        return 3 + 1 + 1 + 2 + 1 + 3;
    case ScanKernel::newton_fused_backward_lstm:
        return 3 + 2 + 2 + 6 + 2 + 3;
    default:
        return 4;
    }
}

// The preferences below come from timing every compiled configuration on an H100 (shape 13200 x L,
// L = 1024 .. 65536; docs/benchmarks.md): shared access is the fastest or within a few percent
// everywhere; linrec's forward and the RG-LRU (math per element to overlap with the loads) like 32
// bytes per thread and tensor, linrec's backward (three loads, two stores) 16 for fp32 and 32 for
// 16-bit elements (16 elements: the per-tile scan across lanes is paid over more elements); fp32
// tiles of 2048 elements (1024 for the RG-LRU's backward), shorter for short sequences. 16-bit rows
// (with packed staging, from the sweeps of 2026-11-22): one warp per row up to L = 1024 (and for
// the RG-LRU up to 4096); linrec tiles of 2048 from L = 4096 (16 x 128; 16 x 256 within 0.3 points
// forward), 4096 from 16384 (16 x 256) and 8192 from 65536 (16 x 512 forward; the backward's
// registers allow 16 x 256); the RG-LRU's largest, 2048 (8 x 256), from L = 16384 (its backward,
// with registers capped for 16 warps per SM: 96-97% of copy against 91% for 8 x 32).
std::int64_t target_tile(ScanKernel kernel, std::int64_t length, int bytes_per_element) {
    if (bytes_per_element == 2) {
        const bool linrec = kernel == ScanKernel::linrec_forward || kernel == ScanKernel::linrec_backward;
        if (length < 4096) return 256;
        if (!linrec) return length >= 16384 ? 2048 : 256; // the RG-LRU's, and the Newton reduction's
        return length >= 65536 ? 8192 : (length >= 16384 ? 4096 : 2048);
    }
    const std::int64_t longest = kernel == ScanKernel::rglru_backward ? 1024 : 2048;
    return std::clamp<std::int64_t>(length, 128, longest);
}
// A row shorter than one warp's tile leaves lanes idle and is read element by element (the row's last
// span): at most length / 32 elements per thread (at least 4). From a sweep of L = 64 .. 512 (H100,
// 2026-11-22): bf16 linrec backward at L = 256 13.7 us with 8 x 32 against 32.1 us with 16 x 32, the
// forward 12.4 against 17.4 us; the RG-LRU at L = 64 15.2 / 33.3 us with 4 x 32 against 19.6 / 38.0.
// The Newton reduction with 2x2 blocks loads six rows per element: 16 bytes per thread and row (an
// estimate from the register count, not measured yet).
int target_bytes_per_thread(ScanKernel kernel, int bytes_per_element, std::int64_t length) {
    if (is_fused_newton_backward(kernel)) return 4 * bytes_per_element; // see fused_target_tile
    const bool narrow = (kernel == ScanKernel::linrec_backward && bytes_per_element == 4) ||
                        kernel == ScanKernel::newton_reduce_2x2;
    const int preferred = narrow ? 16 : 32;
    int elements = 16;
    while (elements > 4 && 32 * elements > length)
        elements /= 2;
    return std::min(preferred, elements * bytes_per_element);
}

// The fused Newton forward's tile, from a sweep of every compiled configuration on an H100 (newton_bench
// --fused-sweep, docs/benchmarks.md "Newton parallel RNNs"): with many sequences (B = 32 x 2048 units)
// one warp per block (8 x 32) was the fastest at every T, both cells and dtypes (1.0-1.5x the next;
// no barriers, many blocks per SM); with few (B = 1 x 256 units, T = 65536) long tiles, 8 x 256 (FlashGRU)
// or 8 x 128 .. 512 (FlashLSTM), since each block walks its sequence's tiles in turn. One warp per block
// once the sequences fill the SMs with 16 blocks each (an estimate between the two measured corners).
// The fused Newton backward (newton_fused_backward_*), its time alone: 4 steps per thread (with 8 a
// thread holds 7 to 10 rows of values, over 110 registers: 16 warps per SM). With many sequences one
// warp per block, 4 x 32: on the H200 (2026-12-02, B = 32 x 2048 units, T = 2048 and 8192, both cells and
// dtypes) 5-17% faster than 4 x 128, which the H100's sweep of 2026-11-24 had found the fastest or
// within 5%; with few long sequences the long tiles below (4 x 512, FlashLSTM's registers 4 x 256).
std::int64_t fused_target_tile(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem) {
    if (problem.sequences >= std::int64_t{16} * std::max(1, limits.sm_count))
        return is_fused_newton_backward(kernel) ? 32 * 4 : 32 * 8;
    return std::clamp<std::int64_t>(problem.length, 128, 2048);
}

} // namespace

std::string_view to_string(ScanAccess access) {
    switch (access) {
    case ScanAccess::direct:
        return "direct";
    case ScanAccess::shared:
        return "shared";
    case ScanAccess::vector:
        return "vector";
    }
    throw ShapeError("flashrnn: invalid ScanAccess " + std::to_string(static_cast<int>(access)));
}

std::string_view to_string(ScanKernel kernel) {
    switch (kernel) {
    case ScanKernel::linrec_forward:
        return "linrec_forward";
    case ScanKernel::linrec_backward:
        return "linrec_backward";
    case ScanKernel::rglru_forward:
        return "rglru_forward";
    case ScanKernel::rglru_backward:
        return "rglru_backward";
    case ScanKernel::newton_reduce_diagonal:
        return "newton_reduce_diagonal";
    case ScanKernel::newton_reduce_2x2:
        return "newton_reduce_2x2";
    case ScanKernel::newton_fused_gru:
        return "newton_fused_gru";
    case ScanKernel::newton_fused_lstm:
        return "newton_fused_lstm";
    case ScanKernel::newton_fused_backward_gru:
        return "newton_fused_backward_gru";
    case ScanKernel::newton_fused_backward_lstm:
        return "newton_fused_backward_lstm";
    }
    throw ShapeError("flashrnn: invalid ScanKernel " + std::to_string(static_cast<int>(kernel)));
}

ScanKernel parse_scan_kernel(std::string_view name) {
    for (ScanKernel k :
         {ScanKernel::linrec_forward, ScanKernel::linrec_backward, ScanKernel::rglru_forward,
          ScanKernel::rglru_backward, ScanKernel::newton_reduce_diagonal, ScanKernel::newton_reduce_2x2,
          ScanKernel::newton_fused_gru, ScanKernel::newton_fused_lstm, ScanKernel::newton_fused_backward_gru,
          ScanKernel::newton_fused_backward_lstm})
        if (to_string(k) == name) return k;
    throw UnsupportedError("flashrnn: unknown scan kernel '" + std::string(name) +
                           "' (linrec_forward, linrec_backward, rglru_forward, rglru_backward, "
                           "newton_reduce_diagonal, newton_reduce_2x2, newton_fused_gru, newton_fused_lstm, "
                           "newton_fused_backward_gru or newton_fused_backward_lstm)");
}

int tensors_loaded(ScanKernel kernel) {
    switch (kernel) {
    case ScanKernel::linrec_forward:
        return 2; // x, c
    case ScanKernel::linrec_backward:
        return 3; // dy, c, y
    case ScanKernel::rglru_forward:
        return 3; // x, gate_a, gate_x
    case ScanKernel::rglru_backward:
        return 5; // x, gate_a, gate_x, h, dh
    case ScanKernel::newton_reduce_diagonal:
        return 2; // J, r
    case ScanKernel::newton_reduce_2x2:
        return 6; // 4 Jacobian rows, 2 right-hand-side rows
    case ScanKernel::newton_fused_gru:
    case ScanKernel::newton_fused_lstm:
        return 3; // the input projections (the parameters are per sequence)
    case ScanKernel::newton_fused_backward_gru:
        return 5; // the input projections, h and its gradient
    case ScanKernel::newton_fused_backward_lstm:
        return 7; // the input projections, h and c and their gradients
    }
    throw ShapeError("flashrnn: invalid ScanKernel " + std::to_string(static_cast<int>(kernel)));
}

int tensors_moved(ScanKernel kernel) {
    switch (kernel) {
    case ScanKernel::linrec_forward:
        return 3;
    case ScanKernel::linrec_backward:
        return 5;
    case ScanKernel::rglru_forward:
        return 4;
    case ScanKernel::rglru_backward:
        return 8;
    case ScanKernel::newton_reduce_diagonal:
        return 3;
    case ScanKernel::newton_reduce_2x2:
        return 8;
    case ScanKernel::newton_fused_gru:
        return 4; // 3 inputs, h
    case ScanKernel::newton_fused_lstm:
        return 5; // 3 inputs, h and c
    case ScanKernel::newton_fused_backward_gru:
        return 8; // 3 inputs, h, dh read; 3 input gradients written
    case ScanKernel::newton_fused_backward_lstm:
        return 10; // 3 inputs, h, c, dh, dc read; 3 input gradients written
    }
    throw ShapeError("flashrnn: invalid ScanKernel " + std::to_string(static_cast<int>(kernel)));
}

bool is_compiled(ScanKernel kernel, const ScanConfig& config) {
    const Domains d = domains_of(kernel);
    auto in = [](const std::vector<Integer>& values, int v) {
        return std::find(values.begin(), values.end(), Integer(v)) != values.end();
    };
    return in(d.elements_per_thread, config.elements_per_thread) &&
           in(d.threads_per_block, config.threads_per_block) &&
           in(d.accesses, static_cast<int>(config.access));
}

std::string describe(const ScanConfig& config) {
    return std::to_string(config.elements_per_thread) + " elements per thread x " +
           std::to_string(config.threads_per_block) + " threads (tile " +
           std::to_string(config.elements_per_thread * config.threads_per_block) + "), " +
           std::string(to_string(config.access)) + " access";
}

namespace {

std::string what_of(ScanKernel kernel) {
    return "scan launch (" + std::string(to_string(kernel)) + ")";
}

void check_problem(ScanKernel kernel, const ScanProblem& problem) {
    if (problem.sequences < 1 || problem.length < 1 || problem.length > 2147483647 ||
        !fits_tensor({problem.sequences, problem.length}))
        throw ShapeError(what_of(kernel) +
                         ": sequences must be at least 1, the length in [1, 2^31-1] and their product at "
                         "most 2^60 - 1, got " +
                         std::to_string(problem.sequences) + " sequences of length " +
                         std::to_string(problem.length));
    if (problem.bytes_per_element != 2 && problem.bytes_per_element != 4)
        throw ShapeError(what_of(kernel) + ": bytes per element must be 2 or 4, got " +
                         std::to_string(problem.bytes_per_element));
}

ScanConfig solve_scan_model(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem);

} // namespace

// Solving takes about a millisecond: the answers are kept (per device description and problem), so
// that a kernel launched in a training loop pays it once. The number of sequences is checked but
// takes no part in the model (except the fused Newton forward's), so it is not part of the key: a new
// batch size solves nothing again.
ScanConfig choose_scan_config(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem) {
    check_problem(kernel, problem);
    using Key =
        std::tuple<std::string, int, int, int, ScanKernel, std::int64_t, int, bool, bool, std::int64_t>;
    static tiling::Memo<Key, ScanConfig> configs(4096);
    const Key key{limits.name,
                  limits.compute_capability(),
                  limits.sm_count,
                  limits.max_threads_per_block,
                  kernel,
                  problem.length,
                  problem.bytes_per_element,
                  problem.rows_aligned,
                  problem.single_tile,
                  is_fused_newton(kernel) ? problem.sequences : 0};
    return configs.get(key, [&] { return solve_scan_model(limits, kernel, problem); });
}

namespace {

// The block-level variables of a scan launch: a compiled configuration (elements per thread, threads,
// access) and the tile they cover.
struct BlockVariables {
    constrint::Var elements, threads, access;
    constrint::Expr tile;
};

// The block's variables and the hardware constraints on them (shared by the scan model and the Newton
// reduction's model, which adds the grid level).
BlockVariables add_block_model(constrint::Model& m, const DeviceLimits& limits, ScanKernel kernel,
                               const ScanProblem& problem) {
    const Domains d = domains_of(kernel);
    const Integer bytes = problem.bytes_per_element;
    const int loaded = tensors_loaded(kernel);

    auto elements = m.var("elements_per_thread", d.elements_per_thread);
    auto threads = m.var("threads_per_block", d.threads_per_block);
    auto access = m.var("access", d.accesses); // 0 direct, 1 shared, 2 vector
    const constrint::Expr tile = elements * threads;

    m.add(threads <= limits.max_threads_per_block, "at most the device's threads per block");
    m.add(threads % limits.warp_size == 0, "threads are whole warps");
    // 32-bit registers, element-wise: two tiles' loads in the pipes, one in the fused Newton forward
    // (it loads a tile's inputs once and keeps them unpacked).
    const bool fused = is_fused_newton(kernel);
    const constrint::Expr raw_loads = (fused ? 1 : 2) * elements * loaded;
    // Per element: the map and the state (2 + 1 words for scalar maps, 6 + 2 for 2x2 blocks), and a word
    // saved; the fused Newton forward keeps its inputs (3), the iterate (S), the map and the update.
    const Integer values_per_element = values_per_element_of(kernel);
    const constrint::Expr registers_elementwise =
        register_estimate_base() + raw_loads + values_per_element * elements;
    const constrint::Expr registers_packed =
        register_estimate_base() + raw_loads * bytes / 4 + values_per_element * elements;
    // Packed: vector access, and shared access of 16-bit elements (staged as words of two).
    const Integer lowest_packed = problem.bytes_per_element == 2 ? 1 : 2;
    m.add((access >= lowest_packed) | (registers_elementwise <= limits.max_registers_per_thread),
          "registers per thread within the per-thread limit (element-wise loads)");
    m.add((access < lowest_packed) | (registers_packed <= limits.max_registers_per_thread),
          "registers per thread within the per-thread limit (packed loads)");
    m.add((access >= lowest_packed) | (registers_elementwise * threads <= limits.max_registers_per_block),
          "registers of the block within the block limit (element-wise loads)");
    m.add((access < lowest_packed) | (registers_packed * threads <= limits.max_registers_per_block),
          "registers of the block within the block limit (packed loads)");
    // Static shared memory: the scan's warp totals (2 buffers x 8 bytes per warp, 24 for 2x2 maps) and,
    // where chunks are staged (shared access), a padded staging area of 33 E floats per warp.
    const constrint::Expr warps = threads / limits.warp_size;
    const constrint::Expr staging = constrint::Expr(132) * elements * warps;
    const bool map2x2 = kernel == ScanKernel::newton_reduce_2x2 || kernel == ScanKernel::newton_fused_lstm ||
                        kernel == ScanKernel::newton_fused_backward_lstm;
    const Integer totals_bytes = map2x2 ? 48 : 16;
    m.add((access != 1) | (totals_bytes * warps + staging + 128 <= limits.shared_memory_per_block),
          "shared memory of the block within the static limit");
    if (!problem.rows_aligned) m.add(access != 2, "vector access needs rows aligned to 16 bytes");
    m.add((access != 2) | (elements * bytes % 16 == 0),
          "vector access in whole 16-byte packets per thread and tensor");
    if (problem.single_tile)
        m.add(tile >= Integer(problem.length), "the tile variant holds the whole sequence in one tile");
    else
        m.add((threads == limits.warp_size) | (tile < Integer(2 * problem.length)),
              "at least half of a tile holds elements (or the block is one warp)");
    return {elements, threads, access, tile};
}

// The measured preferences of the block (see target_tile and target_bytes_per_thread), in order.
void add_block_preferences(constrint::Model& m, const BlockVariables& block, ScanKernel kernel,
                           const ScanProblem& problem, const DeviceLimits& limits) {
    const Integer bytes = problem.bytes_per_element;
    m.minimize(constrint::abs(block.access - 1)); // shared first, then vector or direct
    m.minimize(constrint::abs(block.elements * bytes -
                              target_bytes_per_thread(kernel, problem.bytes_per_element, problem.length)));
    const std::int64_t tile = is_fused_newton(kernel)
                                  ? fused_target_tile(limits, kernel, problem)
                                  : target_tile(kernel, problem.length, problem.bytes_per_element);
    m.minimize(constrint::abs(block.tile - Integer(tile)));
    m.maximize(block.access); // vector before direct
}

std::string no_configuration(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem) {
    return what_of(kernel) + ": no compiled configuration for " + std::to_string(problem.sequences) +
           " sequences of length " + std::to_string(problem.length) + " on " + limits.name;
}

ScanConfig config_of(const constrint::Solution& s, const BlockVariables& block) {
    return {static_cast<int>(s[block.elements]), static_cast<int>(s[block.threads]),
            static_cast<ScanAccess>(static_cast<int>(s[block.access]))};
}

ScanConfig solve_scan_model(const DeviceLimits& limits, ScanKernel kernel, const ScanProblem& problem) {
    constrint::Model m;
    const BlockVariables block = add_block_model(m, limits, kernel, problem);
    m.search({block.access, block.elements, block.threads});
    add_block_preferences(m, block, kernel, problem, limits);
    constrint::SolveOptions options;
    options.node_limit = 100000;
    const constrint::Solution s = tiling::solve_or_explain(m, options, options, [&] {
                                      return no_configuration(limits, kernel, problem);
                                  }).solution;
    return config_of(s, block);
}

} // namespace

namespace {

// The Newton reduction's launch as one model: the block's variables and constraints (add_block_model)
// and the grid level's, `segments` per sequence (one block each) of `max_sequential_steps` tiles each
// (the paper's max_sequential_steps, App. D.2.2: the tiles a block scans one after the other before the
// grid level takes over). Preferences: the block's (measured for the scans), then as close to
// kReductionBlocksPerSm blocks per SM in all as segments of at least kReductionMinTilesPerSegment tiles
// allow, then the fewest segments (each one more costs a map and a state in the workspace).
ReductionLaunch solve_reduction_model(const DeviceLimits& limits, ScanKernel kernel,
                                      const ScanProblem& problem) {
    constrint::Model m;
    const BlockVariables block = add_block_model(m, limits, kernel, problem);
    const Integer length = problem.length, sequences = problem.sequences;
    auto tiles = m.var("tiles", 1, length);
    auto segments = m.var("segments", 1, kReductionMaxSegments);
    auto steps = m.var("max_sequential_steps", 1, length);
    m.add(tiles == (length + block.tile - 1) / block.tile, "the sequence in whole tiles");
    m.add(steps == (tiles + segments - 1) / segments,
          "a segment's sequential steps: the tiles shared evenly among the segments");
    m.add((segments - 1) * steps < tiles, "no segment is empty");
    m.add((segments == 1) | (steps >= kReductionMinTilesPerSegment),
          "a segment of the grid level holds at least " + std::to_string(kReductionMinTilesPerSegment) +
              " tiles");
    m.search({block.access, block.elements, block.threads, segments, tiles, steps});
    m.prefer(segments, constrint::Prefer::SplitLow);
    add_block_preferences(m, block, kernel, problem, limits);
    const Integer wanted_blocks = Integer(kReductionBlocksPerSm) * std::max(1, limits.sm_count);
    m.minimize(constrint::abs(sequences * segments - wanted_blocks));
    m.minimize(constrint::Expr(segments));

    constrint::SolveOptions options;
    options.node_limit = 100000;
    const constrint::Solution s = tiling::solve_or_explain(m, options, options, [&] {
                                      return no_configuration(limits, kernel, problem);
                                  }).solution;

    // Every size derived from the choice, here and nowhere else.
    ReductionLaunch launch;
    launch.config = config_of(s, block);
    const bool block2x2 = kernel == ScanKernel::newton_reduce_2x2;
    launch.map_words = block2x2 ? 6 : 2;
    launch.state_words = block2x2 ? 2 : 1;
    launch.tile = std::int64_t{launch.config.elements_per_thread} * launch.config.threads_per_block;
    launch.max_sequential_steps = static_cast<std::int64_t>(s[steps]);
    launch.segment_length = launch.max_sequential_steps * launch.tile;
    launch.segments = static_cast<std::int64_t>(s[segments]);
    if (launch.segments > 1) {
        const auto entries = static_cast<std::size_t>(problem.sequences * launch.segments);
        const std::size_t totals = entries * static_cast<std::size_t>(launch.map_words) * 4;
        launch.entering_offset = (totals + 255) / 256 * 256;
        launch.workspace_bytes =
            launch.entering_offset + entries * static_cast<std::size_t>(launch.state_words) * 4;
    }
    return launch;
}

} // namespace

// Cached like choose_scan_config, with the number of sequences in the key (it sets the segments).
ReductionLaunch choose_reduction_launch(const DeviceLimits& limits, ScanKernel kernel,
                                        const ScanProblem& problem) {
    if (kernel != ScanKernel::newton_reduce_diagonal && kernel != ScanKernel::newton_reduce_2x2)
        throw ShapeError(what_of(kernel) + ": not a Newton reduction kernel");
    check_problem(kernel, problem);
    using Key = std::tuple<std::string, int, int, int, ScanKernel, std::int64_t, std::int64_t, int>;
    static tiling::Memo<Key, ReductionLaunch> launches(4096);
    const Key key{limits.name, limits.compute_capability(), limits.sm_count, limits.max_threads_per_block,
                  kernel,      problem.sequences,           problem.length,  problem.bytes_per_element};
    return launches.get(key, [&] { return solve_reduction_model(limits, kernel, problem); });
}

} // namespace flashrnn
