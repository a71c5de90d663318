#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus LessEqual::propagate(Store& s) {
    if (!s.set_max(x_, s.max(y_) - offset_) || !s.set_min(y_, s.min(x_) + offset_)) return PropStatus::Fail;
    return s.max(x_) + offset_ <= s.min(y_) ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment LessEqual::entailment(const Store& s) const {
    if (s.max(x_) + offset_ <= s.min(y_)) return Entailment::True;
    if (s.min(x_) + offset_ > s.max(y_)) return Entailment::False;
    return Entailment::Unknown;
}

}  // namespace constrint::engine
