// Search phases: groups of variables branched on before the default order, each with its own
// variable selection and value choice (FlatZinc's int_search / bool_search annotations,
// Gecode's branchers).
#pragma once

#include "constrint/model.hpp"
#include "engine/propagator.hpp"

#include <cstdint>
#include <vector>

namespace constrint::engine {

// Which unfixed variable of a phase is branched on next.
enum class VarSelect : std::uint8_t {
    InputOrder,    // the first one in the phase's order
    FirstFail,     // the smallest domain (ties: phase order)
    AntiFirstFail, // the largest domain
    Smallest,      // the smallest minimum
    Largest,       // the largest maximum
    AfcSizeMax,    // the largest accumulated failure count per value left (Store::afc / size;
                   // Gecode's INT_VAR_AFC_SIZE_MAX, dom/wdeg with decay)
};

struct Phase {
    std::vector<VarId> vars;
    VarSelect select = VarSelect::InputOrder;
    Prefer value = Prefer::Min;
};

} // namespace constrint::engine
