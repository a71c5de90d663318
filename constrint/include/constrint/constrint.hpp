// ConstrINT: an integer constraint-satisfaction engine with exact integers of any size.
#pragma once

#include "constrint/constraint.hpp"
#include "constrint/domain.hpp"
#include "constrint/error.hpp"
#include "constrint/explain.hpp"
#include "constrint/expr.hpp"
#include "constrint/flatzinc.hpp"
#include "constrint/format.hpp"
#include "constrint/integer.hpp"
#include "constrint/model.hpp"
#include "constrint/solver.hpp"
