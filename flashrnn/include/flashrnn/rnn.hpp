// Recurrent networks of the cells: the problem and its tensor layouts, the float64 CPU reference, and
// the GPU passes (passes.hpp: rnn::forward, rnn::backward) over two backends -- alternating (cuBLAS
// products and pointwise kernels) and fused (one persistent kernel per pass) -- or an automatic choice.
#pragma once

#include "flashrnn/rnn/alternating.hpp"
#include "flashrnn/rnn/automatic_backend.hpp"
#include "flashrnn/rnn/backend.hpp"
#include "flashrnn/rnn/fused.hpp"
#include "flashrnn/rnn/layout.hpp"
#include "flashrnn/rnn/passes.hpp"
#include "flashrnn/rnn/problem.hpp"
#include "flashrnn/rnn/recurrent_gradient.hpp"
#include "flashrnn/rnn/reference.hpp"
#include "flashrnn/rnn/tensor_shapes.hpp"
