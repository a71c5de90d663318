#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus Equal::propagate(Store& s) {
    if (!s.intersect(x_, s.dom(y_)) || !s.intersect(y_, s.dom(x_))) return PropStatus::Fail;
    return s.fixed(x_) ? PropStatus::Subsumed : PropStatus::Ok;
}

Entailment Equal::entailment(const Store& s) const {
    if (s.fixed(x_) && s.fixed(y_)) return s.value(x_) == s.value(y_) ? Entailment::True : Entailment::False;
    if (s.max(x_) < s.min(y_) || s.max(y_) < s.min(x_)) return Entailment::False;
    Domain common = s.dom(x_);
    common.intersect(s.dom(y_));
    return common.empty() ? Entailment::False : Entailment::Unknown;
}

}  // namespace constrint::engine
