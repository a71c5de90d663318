// The Newton solvers' GPU entry points in a build without CUDA: every call says so.
#include <string>

#include "flashrnn/core/error.hpp"
#include "flashrnn/newton/passes.hpp"
#include "flashrnn/newton/reduction.hpp"

namespace flashrnn::newton {

namespace {

[[noreturn]] void unavailable(const char* call) {
    throw UnsupportedError(std::string("flashrnn::") + call +
                           ": FlashRNN was built without CUDA (no nvcc at configure time)");
}

} // namespace

std::size_t reduce_workspace_bytes(const ReductionProblem&) {
    unavailable("newton::reduce_workspace_bytes");
}
void reduce(const ReductionProblem&, const ReductionArgs&, Stream) {
    unavailable("newton::reduce");
}
Backend resolve_backward_backend(const Problem&, const Options&) {
    unavailable("newton::resolve_backward_backend");
}
Backend resolve_backend(const Problem&, const Options&) {
    unavailable("newton::resolve_backend");
}
std::size_t forward_workspace_bytes(const Problem&, const Options&) {
    unavailable("newton::forward_workspace_bytes");
}
std::size_t backward_workspace_bytes(const Problem&, const Options&) {
    unavailable("newton::backward_workspace_bytes");
}
void forward(const Problem&, const ForwardArgs&, const Options&, Stream) {
    unavailable("newton::forward");
}
void backward(const Problem&, const BackwardArgs&, const Options&, Stream) {
    unavailable("newton::backward");
}

} // namespace flashrnn::newton
