// The exceptions FlashRNN throws: every entry point throws only these (and std::bad_alloc). Each
// message names the call and carries the data that failed: the tensor and its shape, the limit and
// its value, the failing CUDA call and its message.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flashrnn {

// Base of every FlashRNN error.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// An argument that does not match what the call expects: a tensor's shape, dtype, strides or
// alignment, a missing tensor, a workspace that is too small, a size or option out of its range.
class ShapeError : public Error {
  public:
    using Error::Error;
};

// No kernel configuration fits the problem on this GPU. what() explains in words; conflicts() lists
// the limits that cannot hold together, one sentence each, with their numbers.
class TilingError : public Error {
  public:
    explicit TilingError(const std::string& message, std::vector<std::string> conflicts = {})
        : Error(message), conflicts_(std::move(conflicts)) {}
    const std::vector<std::string>& conflicts() const { return conflicts_; }

  private:
    std::vector<std::string> conflicts_;
};

// A computation that produced no meaningful number: a non-finite input of the Newton solvers, or a
// Newton iteration whose residual is not finite (divergence). The message names the call, the tensor
// or iteration and the position.
class NumericalError : public Error {
  public:
    using Error::Error;
};

// A failure of the CUDA runtime or driver, cuBLAS or NVRTC (with the failing call and its message),
// or of the kernel cache on disk.
class DeviceError : public Error {
  public:
    using Error::Error;
};

// Something this build, this GPU or this kernel does not do: a build without CUDA, a dtype a kernel
// has no version for, an architecture without the needed tensor-core instruction, an unknown name.
class UnsupportedError : public Error {
  public:
    using Error::Error;
};

} // namespace flashrnn
