#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus NotEqual::propagate(Store& s) {
    if (s.fixed(x_)) return s.remove(y_, s.value(x_)) ? PropStatus::Subsumed : PropStatus::Fail;
    if (s.fixed(y_)) return s.remove(x_, s.value(y_)) ? PropStatus::Subsumed : PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment NotEqual::entailment(const Store& s) const {
    if (s.fixed(x_) && s.fixed(y_)) return s.value(x_) != s.value(y_) ? Entailment::True : Entailment::False;
    if (s.max(x_) < s.min(y_) || s.max(y_) < s.min(x_)) return Entailment::True;
    if (s.fixed(x_) && !s.dom(y_).contains(s.value(x_))) return Entailment::True;
    if (s.fixed(y_) && !s.dom(x_).contains(s.value(y_))) return Entailment::True;
    return Entailment::Unknown;
}

}  // namespace constrint::engine
