// FlashRNN: head-wise recurrent cells (LSTM, GRU, sLSTM, Elman) -- cells, layouts, the CPU
// reference and the description of the GPU the kernels are tiled for.
#pragma once

#include "flashrnn/alternating.hpp"
#include "flashrnn/cells/registry.hpp"
#include "flashrnn/cuda_stream.hpp"
#include "flashrnn/device_limits.hpp"
#include "flashrnn/dtype.hpp"
#include "flashrnn/fused.hpp"
#include "flashrnn/layout.hpp"
#include "flashrnn/pointwise_launch.hpp"
#include "flashrnn/problem_shape.hpp"
#include "flashrnn/recurrent_gradient.hpp"
#include "flashrnn/reference.hpp"
#include "flashrnn/tensor_shapes.hpp"
#include "flashrnn/tensor_view.hpp"
