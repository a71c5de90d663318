// The recurrent cells (LSTM, GRU, sLSTM, Elman; FlashGRU and FlashLSTM of the Newton solvers): one
// header of __host__ __device__ pointwise functions each, used by the CPU reference and every kernel,
// and the registry that maps Cell to them (newton/cells.hpp lists the diagonal cells).
#pragma once

#include "flashrnn/cells/flash_gru.hpp"
#include "flashrnn/cells/flash_lstm.hpp"
#include "flashrnn/cells/registry.hpp"
