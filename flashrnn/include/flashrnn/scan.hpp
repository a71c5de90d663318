// Scans: linear recurrences over many independent sequences on one parallel-scan core -- linrec
// (y_l = c_l y_{l-1} + x_l) and the fused RG-LRU -- with their float64 CPU references.
#pragma once

#include "flashrnn/scan/linrec.hpp"
#include "flashrnn/scan/reference.hpp"
#include "flashrnn/scan/rglru.hpp"
#include "flashrnn/scan/rows.hpp"
#include "flashrnn/scan/shape.hpp"
