// The GPU backends' passes behind rnn::forward / rnn::backward (passes.cpp checks every argument
// first, the workspace against the backend's own size): one set of functions per backend, built from
// src/cuda/ or, without CUDA, from src/cuda_unavailable/ (which throw UnsupportedError).
#pragma once

#include <cstddef>

#include "flashrnn/core/stream.hpp"
#include "flashrnn/rnn/automatic_backend.hpp"
#include "flashrnn/rnn/passes.hpp"

namespace flashrnn::alternating {
std::size_t forward_workspace_bytes(const rnn::Problem& problem);
std::size_t backward_workspace_bytes(const rnn::Problem& problem);
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream);
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream);
} // namespace flashrnn::alternating

namespace flashrnn::fused {
// Backend::automatic's choice for the pass on the current GPU: the cost rule of automatic_backend.hpp
// on the kernel compiled for it (remembered per problem and pass, so that the choice costs a lookup
// per call).
rnn::AutomaticChoice automatic_choice(const rnn::Problem& problem, FusedPass pass);
std::size_t forward_workspace_bytes(const rnn::Problem& problem);
std::size_t backward_workspace_bytes(const rnn::Problem& problem);
void forward(const rnn::Problem& problem, const rnn::ForwardArgs& args, Stream stream);
void backward(const rnn::Problem& problem, const rnn::BackwardArgs& args, const RecurrentGradient& policy,
              Stream stream);
} // namespace flashrnn::fused
