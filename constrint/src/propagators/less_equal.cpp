#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus LessEqual::propagate(Store& s) {
    if (!x_.set_max(s, y_.max(s) - offset_) || !y_.set_min(s, x_.min(s) + offset_)) return PropStatus::Fail;
    return x_.max(s) + offset_ <= y_.min(s) ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment LessEqual::entailment(const Store& s) const {
    if (x_.max(s) + offset_ <= y_.min(s)) return Entailment::True;
    if (x_.min(s) + offset_ > y_.max(s)) return Entailment::False;
    return Entailment::Unknown;
}

} // namespace constrint::engine
