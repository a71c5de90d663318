#include "propagators/relations.hpp"

namespace constrint::engine {

PropStatus Member::propagate(Store& s) {
    return s.intersect(x_, set_) ? PropStatus::Subsumed : PropStatus::Fail;
}

Entailment Member::entailment(const Store& s) const {
    if (s.fixed(x_)) return set_.contains(s.value(x_)) ? Entailment::True : Entailment::False;
    Domain common = s.dom(x_);
    common.intersect(set_);
    if (common.empty()) return Entailment::False;
    return common.size() == s.dom(x_).size() ? Entailment::True : Entailment::Unknown;
}

} // namespace constrint::engine
