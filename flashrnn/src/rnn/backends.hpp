// The GPU backends' passes behind rnn::forward / rnn::backward (passes.cpp checks every argument
// first, the workspace against the backend's own size): one set of functions per backend, built from
// src/cuda/ or, without CUDA, from src/cuda_unavailable/ (which throw UnsupportedError).
#pragma once

#include <cstddef>

#include "flashrnn/core/stream.hpp"
#include "flashrnn/rnn/passes.hpp"

namespace flashrnn::alternating {
std::size_t forward_workspace_bytes(const rnn::Problem& problem);
std::size_t backward_workspace_bytes(const rnn::Problem& problem);
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream);
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream);
} // namespace flashrnn::alternating

namespace flashrnn::fused {
// Whether Backend::automatic takes the fused backend for the problem on the current GPU (the cost rule
// in fused_backend.cpp; remembered per problem, so that the automatic choice costs a lookup per call).
bool automatic_takes(const rnn::Problem& problem);
std::size_t forward_workspace_bytes(const rnn::Problem& problem);
std::size_t backward_workspace_bytes(const rnn::Problem& problem);
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream);
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream);
} // namespace flashrnn::fused
