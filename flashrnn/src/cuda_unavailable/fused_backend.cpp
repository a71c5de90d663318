// Built when FlashRNN has no CUDA kernels: the fused backend says why it cannot run.
#include <stdexcept>

#include "flashrnn/fused.hpp"

namespace flashrnn::fused {
namespace {
[[noreturn]] void unavailable() {
    throw std::runtime_error(
        "flashrnn: the fused backend needs FlashRNN built with CUDA (nvcc was not found when it "
        "was configured)");
}
} // namespace

FusedKernelTraits traits(Cell, const ProblemShape&, DType, FusedPass) {
    unavailable();
}
void prepare(Cell, const ProblemShape&, DType) {
    unavailable();
}
std::size_t forward_workspace_bytes(Cell, const ProblemShape&, DType) {
    unavailable();
}
std::size_t backward_workspace_bytes(Cell, const ProblemShape&, DType) {
    unavailable();
}
void forward(Cell, const ProblemShape&, DType, const ForwardArgs&, void*, std::size_t, Stream) {
    unavailable();
}
void backward(Cell, const ProblemShape&, DType, const BackwardArgs&, RecurrentGradient, void*, std::size_t,
              Stream) {
    unavailable();
}

} // namespace flashrnn::fused
