// Benchmark of FlashRNN's alternating backend on the GPU (docs/benchmarks.md): forward and
// forward+backward at the FlashRNN paper's shapes, each timed with CUDA events after a warm-up, the
// median of many runs, launched eagerly and replayed from a captured CUDA graph.
//
//   alternating_bench [--dtype bf16] [--cell lstm] [--steps 1024] [--runs 15] [--csv FILE] [--quick]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_bench.hpp"
#include "flashrnn/device_tensor.hpp"
#include "flashrnn/flashrnn.hpp"

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

struct Row {
    long long batch, heads, head_dim;
    double forward_ms, forward_graph_ms, training_ms, training_graph_ms;
};

Row measure(flashrnn::Cell cell, flashrnn::DType dtype, flashrnn::ProblemShape shape, int runs, cudaStream_t stream) {
    using namespace flashrnn;
    const CellInfo info = cell_info(cell);
    const int bytes = bytes_of(dtype);
    auto count = [&](const std::vector<NamedExtent>& s) {
        std::size_t n = 1;
        for (const NamedExtent& e : s) n *= static_cast<std::size_t>(e.size);
        return n;
    };
    std::mt19937_64 rng(7);
    const std::size_t n_wx = count(gate_inputs_shape(info, shape)), n_r = count(recurrent_weights_shape(info, shape)),
                      n_b = count(bias_shape(info, shape)), n_s = count(states_shape(info, shape)),
                      n_seq = count(state_sequence_shape(info, shape));
    Buffer wx(n_wx * bytes), r(n_r * bytes), b(n_b * bytes), s0(n_s * bytes), states(n_seq * bytes),
        last(n_s * bytes), cache(alternating::gate_cache_elements(cell, shape) * 4), d_states(n_seq * bytes),
        d_wx(n_wx * bytes), d_r(n_r * bytes), d_b(n_b * bytes), d_s0(n_s * bytes);
    fill_random(wx.data, n_wx, dtype, 1.0, rng);
    fill_random(r.data, n_r, dtype, 1.0 / std::sqrt(static_cast<double>(shape.head_dim)), rng);
    fill_random(b.data, n_b, dtype, 0.5, rng);
    fill_random(s0.data, n_s, dtype, 0.5, rng);
    fill_random(d_states.data, n_seq, dtype, 1.0, rng);
    const std::size_t fw_bytes = alternating::forward_workspace_bytes(cell, shape, dtype);
    const std::size_t bw_bytes = alternating::backward_workspace_bytes(cell, shape, dtype);
    Buffer fw(fw_bytes), bw(bw_bytes);

    auto inference = [&] {
        alternating::forward(cell, shape, dtype, {wx.data, r.data, b.data, s0.data, states.data, last.data, nullptr},
                             fw.data, fw_bytes, stream);
    };
    auto training = [&] {
        alternating::forward(cell, shape, dtype,
                             {wx.data, r.data, b.data, s0.data, states.data, last.data, cache.data}, fw.data,
                             fw_bytes, stream);
        alternating::backward(cell, shape, dtype,
                              {r.data, states.data, cache.data, d_states.data, nullptr, d_wx.data, d_r.data,
                               d_b.data, d_s0.data},
                              RecurrentGradient::full(), bw.data, bw_bytes, stream);
    };
    Row row{shape.batch, shape.heads, shape.head_dim, 0, 0, 0, 0};
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

} // namespace

int main(int argc, char** argv) {
    try {
        flashrnn::DType dtype = flashrnn::DType::bf16;
        flashrnn::Cell cell = flashrnn::Cell::lstm;
        long long steps = 1024;
        int runs = 15;
        bool quick = false;
        std::string csv_path;
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
                return argv[++i];
            };
            if (arg == "--dtype") dtype = flashrnn::parse_dtype(value());
            else if (arg == "--cell") cell = flashrnn::parse_cell(value());
            else if (arg == "--steps") steps = std::stoll(value());
            else if (arg == "--runs") runs = std::stoi(value());
            else if (arg == "--csv") csv_path = value();
            else if (arg == "--quick") quick = true;
            else throw std::invalid_argument("unknown option " + arg);
        }
        if (!flashrnn::cuda_device_available()) {
            std::printf("alternating_bench: no CUDA device, nothing to measure\n");
            return 0;
        }
        std::vector<flashrnn::ProblemShape> shapes;
        for (auto [nh, dh] : {std::pair{48, 16}, {24, 32}, {12, 64}, {6, 128}, {3, 256}, {1, 768}})
            shapes.push_back({steps, 16, nh, dh});
        if (!quick)
            for (long long batch : {2, 4, 8, 32, 64, 128, 256})
                for (auto [nh, dh] : {std::pair{12, 64}, {1, 768}})
                    shapes.push_back({steps, batch, nh, dh});
        cudaStream_t stream;
        cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
        FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
        if (csv) std::fprintf(csv, "cell,dtype,T,B,NH,DH,forward_ms,forward_graph_ms,fwbw_ms,fwbw_graph_ms\n");
        std::printf("alternating backend, %s %s, T=%lld (median of %d, CUDA events)\n",
                    std::string(flashrnn::cell_info(cell).name).c_str(),
                    std::string(flashrnn::to_string(dtype)).c_str(), steps, runs);
        std::printf("%5s %4s %5s | %10s %10s | %10s %10s\n", "B", "NH", "DH", "fw ms", "fw graph", "fw+bw ms",
                    "fw+bw graph");
        for (const flashrnn::ProblemShape& shape : shapes) {
            const Row row = measure(cell, dtype, shape, runs, stream);
            std::printf("%5lld %4lld %5lld | %10.3f %10.3f | %10.3f %10.3f\n", row.batch, row.heads, row.head_dim,
                        row.forward_ms, row.forward_graph_ms, row.training_ms, row.training_graph_ms);
            std::fflush(stdout);
            if (csv)
                std::fprintf(csv, "%s,%s,%lld,%lld,%lld,%lld,%.4f,%.4f,%.4f,%.4f\n",
                             std::string(flashrnn::cell_info(cell).name).c_str(),
                             std::string(flashrnn::to_string(dtype)).c_str(), steps, row.batch, row.heads,
                             row.head_dim, row.forward_ms, row.forward_graph_ms, row.training_ms,
                             row.training_graph_ms);
        }
        if (csv) std::fclose(csv);
        cudaStreamDestroy(stream);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alternating_bench: %s\n", e.what());
        return 1;
    }
}
