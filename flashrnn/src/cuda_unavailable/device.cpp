// Built when FlashRNN has no CUDA kernels (no nvcc at configure time).
#include "flashrnn/core/stream.hpp"

namespace flashrnn {

bool cuda_device_available() {
    return false;
}

} // namespace flashrnn
