// The CUDA stream type of FlashRNN's host API, declared without the CUDA headers so that code that
// never launches a kernel builds without them. `Stream` is cudaStream_t (nullptr: the legacy default
// stream).
#pragma once

struct CUstream_st;

namespace flashrnn {

using Stream = CUstream_st*;

// True when FlashRNN was built with its CUDA kernels and a CUDA device is present.
bool cuda_device_available();

} // namespace flashrnn
