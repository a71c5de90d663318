// FlashRNN's core: element types, the CUDA stream, errors and tensor views (device and host).
#pragma once

#include "flashrnn/core/dtype.hpp"
#include "flashrnn/core/error.hpp"
#include "flashrnn/core/host_tensor.hpp"
#include "flashrnn/core/stream.hpp"
#include "flashrnn/core/tensor.hpp"
#include "flashrnn/core/tensor_size.hpp"
