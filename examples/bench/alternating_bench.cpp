// Benchmark of FlashRNN's alternating and fused backends on the GPU (docs/benchmarks.md), side by side
// in one run: forward and forward+backward at the FlashRNN paper's shapes, each timed with CUDA events
// after a warm-up, the median of many runs, launched eagerly and replayed from a captured CUDA graph;
// the graph-replayed times also per time step. The fused kernels are compiled before the timing
// (fused::prepare); a shape the fused backend has no configuration for is reported and skipped.
// The alternating backend keeps a graph of each pass for repeated calls (alternating.hpp): its eager
// calls replay it, and a line under its row gives what a call that captures one costs.
// FLASHRNN_ALTERNATING_GRAPHS=0 measures its direct launches instead.
//
//   alternating_bench [--backend alternating|fused|both] [--dtype bf16] [--cell lstm] [--steps 1024]
//                     [--runs 15] [--csv FILE] [--quick] [--batches 64,128,256] [--shapes NH:DH:B,...]
// --quick: the B = 16 shapes only; --batches: only the batch sweep (12 x 64 and 1 x 768), at these B;
// --shapes: only these heads x head size x batch (any cell's shapes, e.g. 4:192:16 for the GRU).
// --backend both: also the automatic backend, pass by pass (what it picks and why), its times and
// their ratio to the faster backend's.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashrnn/flashrnn.hpp"
#include "flashrnn/rnn/fused.hpp"
#include "gpu_bench.hpp"
#include "testing/device_tensor.hpp"

namespace {

using bench::cuda_ok;
using bench::median_ms;

using Buffer = bench::DeviceBuffer;

// Fills `count` elements with uniform values in [-scale, scale]: a random pool on the host, repeated.
void fill_random(void* target, std::size_t count, flashrnn::DType dtype, double scale, std::mt19937_64& rng) {
    const std::size_t pool = std::min<std::size_t>(count, 1 << 20);
    const int bytes = flashrnn::bytes_of(dtype);
    std::vector<unsigned char> host(pool * bytes);
    std::uniform_real_distribution<float> uniform(static_cast<float>(-scale), static_cast<float>(scale));
    for (std::size_t i = 0; i < pool; ++i)
        flashrnn::encode(dtype, uniform(rng), &host[i * bytes]);
    for (std::size_t done = 0; done < count; done += pool) {
        const std::size_t n = std::min(pool, count - done);
        cuda_ok(cudaMemcpy(static_cast<unsigned char*>(target) + done * bytes, host.data(), n * bytes,
                           cudaMemcpyHostToDevice),
                "cudaMemcpy");
    }
}

// Replays a captured graph of `work` instead of launching it eagerly.
struct CapturedGraph {
    cudaGraphExec_t exec = nullptr;
    CapturedGraph(const std::function<void()>& work, cudaStream_t stream) {
        cudaGraph_t graph;
        cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        work();
        cuda_ok(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
        cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
        cudaGraphDestroy(graph);
    }
    ~CapturedGraph() { cudaGraphExecDestroy(exec); }
    void replay(cudaStream_t stream) const { cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }
};

// A backend as the benchmark calls it: rnn::forward / rnn::backward with Options::backend.
struct Backend {
    const char* name;
    flashrnn::rnn::Backend backend;
};

const Backend kAlternating{"alternating", flashrnn::rnn::Backend::alternating};
const Backend kFused{"fused", flashrnn::rnn::Backend::fused};
const Backend kAutomatic{"automatic", flashrnn::rnn::Backend::automatic};

// Elements of each tensor of one problem.
struct Counts {
    std::size_t wx, r, b, s, seq, cache;
};

Counts counts_of(flashrnn::Cell cell, const flashrnn::ProblemShape& shape) {
    using namespace flashrnn;
    const CellInfo info = cell_info(cell);
    auto count = [](const NamedShape& named) { return static_cast<std::size_t>(named.sizes().product()); };
    return {count(gate_inputs_shape(info, shape)),    count(recurrent_weights_shape(info, shape)),
            count(bias_shape(info, shape)),           count(states_shape(info, shape)),
            count(state_sequence_shape(info, shape)), rnn::gate_cache_elements({cell, DType::fp32, shape})};
}

// The tensors of one problem, random, shared by the backends measured on it.
struct Tensors {
    Counts n;
    std::size_t bytes;
    Buffer wx, r, b, s0, states, last, cache, d_states, d_wx, d_r, d_b, d_s0;

    Tensors(flashrnn::Cell cell, flashrnn::DType dtype, const flashrnn::ProblemShape& shape)
        : n(counts_of(cell, shape)), bytes(static_cast<std::size_t>(flashrnn::bytes_of(dtype))),
          wx(n.wx * bytes), r(n.r * bytes), b(n.b * bytes), s0(n.s * bytes), states(n.seq * bytes),
          last(n.s * bytes), cache(n.cache * 4), d_states(n.seq * bytes), d_wx(n.wx * bytes),
          d_r(n.r * bytes), d_b(n.b * bytes), d_s0(n.s * bytes) {
        std::mt19937_64 rng(7);
        fill_random(wx.data, n.wx, dtype, 1.0, rng);
        fill_random(r.data, n.r, dtype, 1.0 / std::sqrt(static_cast<double>(shape.head_dim)), rng);
        fill_random(b.data, n.b, dtype, 0.5, rng);
        fill_random(s0.data, n.s, dtype, 0.5, rng);
        fill_random(d_states.data, n.seq, dtype, 1.0, rng);
    }
};

struct Row {
    double forward_ms, forward_graph_ms, training_ms, training_graph_ms;
    // Alternating backend with graphs kept (else negative): one call that captures and instantiates
    // the graphs (the first of a shape), and a forward with new pointers (staged: inputs copied into the
    // backend's buffers, its graph replayed, outputs copied out).
    double first_forward_ms = -1, first_training_ms = -1, new_pointers_forward_ms = -1;
};

// The alternating backend's calls that capture: medians of 5 single calls after dropping the kept
// graphs, and forwards on a new workspace each (more than the graphs kept per shape, so that after a
// warm-up every call is staged).
void measure_graph_capture(const std::function<void()>& inference, const std::function<void()>& training,
                           const std::function<void(void*)>& inference_with_workspace, std::size_t fw_bytes,
                           int runs, cudaStream_t stream, Row& row) {
    if (!flashrnn::alternating::graph_reuse()) return;
    auto first_call_ms = [&](const std::function<void()>& call) {
        std::vector<double> times;
        for (int i = 0; i < 5; ++i) {
            flashrnn::alternating::release_graphs();
            times.push_back(median_ms(call, 1, 0, stream));
        }
        std::sort(times.begin(), times.end());
        return times[2];
    };
    row.first_forward_ms = first_call_ms(inference);
    row.first_training_ms = first_call_ms(training);
    std::vector<std::unique_ptr<Buffer>> workspaces;
    for (int i = 0; i < 8; ++i)
        workspaces.push_back(std::make_unique<Buffer>(fw_bytes));
    std::size_t next = 0;
    row.new_pointers_forward_ms = median_ms(
        [&] { inference_with_workspace(workspaces[next++ % workspaces.size()]->data); }, runs, 8, stream);
    flashrnn::alternating::release_graphs();
}

Row measure(const Backend& backend, flashrnn::Cell cell, flashrnn::DType dtype,
            const flashrnn::ProblemShape& shape, Tensors& t, int runs, cudaStream_t stream) {
    using namespace flashrnn;
    const rnn::Problem problem{cell, dtype, shape};
    const rnn::Options options{backend.backend};
    if (backend.backend == rnn::Backend::fused) fused::prepare(problem); // NVRTC, not timed
    const std::size_t fw_bytes = rnn::forward_workspace_bytes(problem, options);
    const std::size_t bw_bytes = rnn::backward_workspace_bytes(problem, options);
    Buffer fw(fw_bytes), bw(bw_bytes);
    const CellInfo info = cell_info(cell);
    auto view = [&](const Buffer& buffer, const NamedShape& s) {
        return TensorView{buffer.data, dtype, s.sizes()};
    };
    const TensorView cache{t.cache.data, DType::fp32, {static_cast<std::int64_t>(t.n.cache)}};
    auto forward_args = [&](bool with_cache, void* workspace) {
        return rnn::ForwardArgs{view(t.wx, gate_inputs_shape(info, shape)),
                                view(t.r, recurrent_weights_shape(info, shape)),
                                view(t.b, bias_shape(info, shape)),
                                view(t.s0, states_shape(info, shape)),
                                view(t.states, state_sequence_shape(info, shape)),
                                view(t.last, states_shape(info, shape)),
                                with_cache ? cache : TensorView{},
                                {workspace, fw_bytes}};
    };
    const rnn::BackwardArgs backward_args{view(t.r, recurrent_weights_shape(info, shape)),
                                          view(t.states, state_sequence_shape(info, shape)),
                                          cache,
                                          view(t.d_states, state_sequence_shape(info, shape)),
                                          {},
                                          view(t.d_wx, gate_inputs_shape(info, shape)),
                                          view(t.d_r, recurrent_weights_shape(info, shape)),
                                          view(t.d_b, bias_shape(info, shape)),
                                          view(t.d_s0, states_shape(info, shape)),
                                          {bw.data, bw_bytes}};

    auto inference = [&] { rnn::forward(problem, forward_args(false, fw.data), options, stream); };
    auto training = [&] {
        rnn::forward(problem, forward_args(true, fw.data), options, stream);
        rnn::backward(problem, backward_args, options, stream);
    };
    Row row{};
    if (&backend == &kAlternating)
        measure_graph_capture(
            inference, training,
            [&](void* workspace) { rnn::forward(problem, forward_args(false, workspace), options, stream); },
            fw_bytes, runs, stream, row);
    row.forward_ms = median_ms(inference, runs, 3, stream);
    row.training_ms = median_ms(training, runs, 2, stream);
    {
        const CapturedGraph graph(inference, stream);
        row.forward_graph_ms = median_ms([&] { graph.replay(stream); }, runs, 3, stream);
    }
    {
        const CapturedGraph graph(training, stream);
        row.training_graph_ms = median_ms([&] { graph.replay(stream); }, runs, 2, stream);
    }
    cuda_ok(cudaStreamSynchronize(stream), "benchmark run");
    return row;
}

// The start of a row of the table: the backend and the shape.
void print_label(const char* name, const flashrnn::ProblemShape& shape) {
    std::printf("%-11s %5lld %4lld %5lld | ", name, static_cast<long long>(shape.batch),
                static_cast<long long>(shape.heads), static_cast<long long>(shape.head_dim));
    std::fflush(stdout);
}

// The rest of the row: the times (and the CSV's row when there is one).
void print_times(const char* name, const std::string& cell_name, const std::string& dtype_name,
                 long long steps, const flashrnn::ProblemShape& shape, const Row& row, FILE* csv) {
    const double per_step = 1000.0 / static_cast<double>(steps);
    std::printf("%10.3f %10.3f | %10.3f %10.3f | %13.2f %13.2f\n", row.forward_ms, row.forward_graph_ms,
                row.training_ms, row.training_graph_ms, row.forward_graph_ms * per_step,
                row.training_graph_ms * per_step);
    std::fflush(stdout);
    if (csv)
        std::fprintf(csv, "%s,%s,%s,%lld,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f\n", name,
                     cell_name.c_str(), dtype_name.c_str(), steps, static_cast<long long>(shape.batch),
                     static_cast<long long>(shape.heads), static_cast<long long>(shape.head_dim),
                     row.forward_ms, row.forward_graph_ms, row.training_ms, row.training_graph_ms,
                     row.forward_graph_ms * per_step, row.training_graph_ms * per_step);
}

// What Backend::automatic picks in each pass and why, its times, and how far they are from the faster
// backend's (a backend the GPU has no configuration for is not measured: the other one is the
// faster). Where both passes pick one backend its calls are that backend's, so its row is reused;
// where they differ (a fused forward, an alternating backward) the automatic backend is measured.
void measure_automatic_choice(flashrnn::Cell cell, flashrnn::DType dtype, const flashrnn::ProblemShape& shape,
                              const std::map<flashrnn::rnn::Backend, Row>& measured, Tensors& tensors,
                              int runs, cudaStream_t stream, long long steps, FILE* csv) {
    using flashrnn::FusedPass;
    using flashrnn::rnn::Backend;
    const flashrnn::rnn::Problem problem{cell, dtype, shape};
    const flashrnn::rnn::AutomaticChoice forward =
        flashrnn::rnn::automatic_choice(problem, FusedPass::forward);
    const flashrnn::rnn::AutomaticChoice backward =
        flashrnn::rnn::automatic_choice(problem, FusedPass::backward);
    std::printf("%-11s %5s %4s %5s | forward %s\n%-11s %5s %4s %5s | backward %s\n", "", "", "", "",
                forward.reason.c_str(), "", "", "", "", backward.reason.c_str());
    Row row;
    if (forward.backend != backward.backend) {
        row = measure(kAutomatic, cell, dtype, shape, tensors, runs, stream);
    } else if (const auto same = measured.find(forward.backend); same != measured.end()) {
        row = same->second;
    } else {
        std::printf("%-11s %5s %4s %5s | automatic picks %s, which was not measured\n", "", "", "", "",
                    std::string(flashrnn::rnn::to_string(forward.backend)).c_str());
        return;
    }
    print_label(kAutomatic.name, shape);
    print_times(kAutomatic.name, std::string(flashrnn::cell_info(cell).name),
                std::string(flashrnn::to_string(dtype)), steps, shape, row, csv);
    double fastest_fw = row.forward_graph_ms, fastest_fwbw = row.training_graph_ms;
    for (const auto& [backend, other] : measured) {
        fastest_fw = std::min(fastest_fw, other.forward_graph_ms);
        fastest_fwbw = std::min(fastest_fwbw, other.training_graph_ms);
    }
    std::printf("%-11s %5s %4s %5s | automatic picks forward %s, backward %s: fw %.2fx, fw+bw %.2fx the "
                "faster backend's time\n",
                "", "", "", "", std::string(flashrnn::rnn::to_string(forward.backend)).c_str(),
                std::string(flashrnn::rnn::to_string(backward.backend)).c_str(),
                row.forward_graph_ms / fastest_fw, row.training_graph_ms / fastest_fwbw);
}

// "64,128,256": positive batch sizes, comma-separated.
// "NH:DH:B,..." of --shapes, each a head count, head size and batch, all positive.
std::vector<flashrnn::ProblemShape> parse_shapes(const std::string& text, long long steps) {
    std::vector<flashrnn::ProblemShape> shapes;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        long long heads = 0, head_dim = 0, batch = 0;
        char tail = 0;
        if (std::sscanf(item.c_str(), "%lld:%lld:%lld%c", &heads, &head_dim, &batch, &tail) != 3 ||
            heads <= 0 || head_dim <= 0 || batch <= 0)
            throw std::invalid_argument("--shapes " + text + ": '" + item +
                                        "' is not NH:DH:B with three positive integers");
        shapes.push_back({steps, batch, heads, head_dim});
        start = end + 1;
    }
    return shapes;
}

std::vector<long long> parse_batches(const std::string& text) {
    std::vector<long long> batches;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, end - start);
        std::size_t used = 0;
        long long batch = 0;
        try {
            batch = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size() || batch <= 0)
            throw std::invalid_argument("--batches " + text + ": '" + item +
                                        "' is not a positive batch size");
        batches.push_back(batch);
        start = end + 1;
    }
    return batches;
}

std::vector<const Backend*> parse_backends(const std::string& name) {
    if (name == "alternating") return {&kAlternating};
    if (name == "fused") return {&kFused};
    if (name == "both") return {&kAlternating, &kFused};
    throw std::invalid_argument("--backend " + name + ": expected alternating, fused or both");
}

} // namespace

int main(int argc, char** argv) {
    try {
        flashrnn::DType dtype = flashrnn::DType::bf16;
        flashrnn::Cell cell = flashrnn::Cell::lstm;
        std::vector<const Backend*> backends = parse_backends("both");
        long long steps = 1024;
        int runs = 15;
        bool quick = false;
        std::vector<long long> batches; // --batches: only the batch sweep, at these batches
        std::string shapes_text;        // --shapes: only these shapes
        std::string csv_path;
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
                return argv[++i];
            };
            if (arg == "--backend")
                backends = parse_backends(value());
            else if (arg == "--dtype")
                dtype = flashrnn::parse_dtype(value());
            else if (arg == "--cell")
                cell = flashrnn::parse_cell(value());
            else if (arg == "--steps")
                steps = std::stoll(value());
            else if (arg == "--runs")
                runs = std::stoi(value());
            else if (arg == "--csv")
                csv_path = value();
            else if (arg == "--quick")
                quick = true;
            else if (arg == "--batches")
                batches = parse_batches(value());
            else if (arg == "--shapes")
                shapes_text = value();
            else
                throw std::invalid_argument("unknown option " + arg);
        }
        std::vector<flashrnn::ProblemShape> shapes;
        if (!shapes_text.empty()) {
            shapes = parse_shapes(shapes_text, steps);
            quick = true; // no batch sweep after them
        } else if (batches.empty())
            for (auto [nh, dh] : {std::pair{48, 16}, {24, 32}, {12, 64}, {6, 128}, {3, 256}, {1, 768}})
                shapes.push_back({steps, 16, nh, dh});
        if (batches.empty() && !quick) batches = {2, 4, 8, 32, 64, 128, 256};
        for (long long batch : batches)
            for (auto [nh, dh] : {std::pair{12, 64}, {1, 768}})
                shapes.push_back({steps, batch, nh, dh});
        if (!flashrnn::cuda_device_available()) {
            std::printf("alternating_bench: no CUDA device, nothing to measure\n");
            return 0;
        }
        cudaStream_t stream;
        cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
        FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
        if (!csv_path.empty() && !csv) throw std::runtime_error("cannot write " + csv_path);
        if (csv)
            std::fprintf(csv,
                         "backend,cell,dtype,T,B,NH,DH,forward_ms,forward_graph_ms,fwbw_ms,fwbw_graph_ms,"
                         "forward_graph_us_per_step,fwbw_graph_us_per_step\n");
        const std::string cell_name(flashrnn::cell_info(cell).name), dtype_name(flashrnn::to_string(dtype));
        std::printf("%s %s, T=%lld (median of %d, CUDA events; us/step from the graph replays)\n",
                    cell_name.c_str(), dtype_name.c_str(), steps, runs);
        std::printf("%-11s %5s %4s %5s | %10s %10s | %10s %10s | %13s %13s\n", "backend", "B", "NH", "DH",
                    "fw ms", "fw graph", "fw+bw ms", "fw+bw graph", "fw us/step", "fw+bw us/step");
        for (const flashrnn::ProblemShape& shape : shapes) {
            Tensors tensors(cell, dtype, shape);
            std::map<flashrnn::rnn::Backend, Row> measured; // graph replays, for the automatic choice
            for (const Backend* backend : backends) {
                print_label(backend->name, shape);
                Row row;
                try {
                    row = measure(*backend, cell, dtype, shape, tensors, runs, stream);
                } catch (const flashrnn::TilingError& e) { // this GPU has no configuration for the shape
                    std::printf("no configuration: %s\n", e.what());
                    continue;
                }
                measured[backend->backend] = row;
                print_times(backend->name, cell_name, dtype_name, steps, shape, row, csv);
                if (row.first_forward_ms >= 0)
                    std::printf(
                        "%-11s %5s %4s %5s | first call (capture + instantiate): fw %.3f ms, fw+bw %.3f "
                        "ms; fw with new pointers each call (staged): %.3f ms\n",
                        "", "", "", "", row.first_forward_ms, row.first_training_ms,
                        row.new_pointers_forward_ms);
            }
            if (backends.size() == 2)
                measure_automatic_choice(cell, dtype, shape, measured, tensors, runs, stream, steps, csv);
        }
        if (csv) std::fclose(csv);
        cudaStreamDestroy(stream);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alternating_bench: %s\n", e.what());
        return 1;
    }
}
