// Newton solvers: nonlinear RNNs with diagonal Jacobians (FlashGRU, FlashLSTM) solved in parallel over
// the sequence by Newton's method, each step one reduction of a block bi-diagonal linear system
// (Danieli et al., "ParaRNN"): the cells' list, the problem and its tensors, the GPU passes, the public
// reduction, and the float64 CPU references.
#pragma once

#include "flashrnn/newton/cells.hpp"
#include "flashrnn/newton/passes.hpp"
#include "flashrnn/newton/problem.hpp"
#include "flashrnn/newton/reduction.hpp"
#include "flashrnn/newton/reference.hpp"
