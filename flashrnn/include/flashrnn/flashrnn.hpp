// FlashRNN: CUDA kernels for recurrent networks whose tiling is chosen by ConstrINT models of the
// GPU's limits. Every module (docs/kernels.md, "Modules"):
//   core    element types, stream, errors, tensor views
//   cells   the cells' pointwise math (LSTM, GRU, sLSTM, Elman)
//   rnn     recurrent networks of the cells: reference, alternating and fused backends
//   scan    linear recurrences: linrec, RG-LRU
//   newton  nonlinear diagonal RNNs (FlashGRU, FlashLSTM) solved by Newton's method over the sequence
//   tiling  device limits and the tiling models
#pragma once

#include "flashrnn/cells.hpp"
#include "flashrnn/core.hpp"
#include "flashrnn/newton.hpp"
#include "flashrnn/rnn.hpp"
#include "flashrnn/scan.hpp"
#include "flashrnn/tiling.hpp"
