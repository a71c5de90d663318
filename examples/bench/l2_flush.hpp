// Evicts the device's L2 cache between timed runs, so that a run does not find the previous run's
// data there: it reads a buffer of twice the L2's size (reads only, so that no dirty lines are left
// for the timed run to write back).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace bench {

class L2Flush {
  public:
    explicit L2Flush(int device = 0);
    L2Flush(const L2Flush&) = delete;
    L2Flush& operator=(const L2Flush&) = delete;
    ~L2Flush();
    // Enqueues the reading on `stream`.
    void operator()(cudaStream_t stream = nullptr) const;
    std::size_t bytes() const { return bytes_; }

  private:
    void* buffer_ = nullptr;
    unsigned* sink_ = nullptr;
    std::size_t bytes_ = 0;
};

} // namespace bench
