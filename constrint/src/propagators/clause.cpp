#include "propagators/clause.hpp"

namespace constrint::engine {

PropStatus Clause::propagate(Store& s) {
    VarId open = -1;
    bool open_positive = false;
    int open_count = 0;
    for (const bool positive : {true, false}) {
        for (VarId x : positive ? positive_ : negative_) {
            if (!s.set_bounds(x, 0, 1)) return PropStatus::Fail;
            if (!s.fixed(x)) {
                open = x;
                open_positive = positive;
                ++open_count;
            } else if ((s.value(x) == 1) == positive) {
                return PropStatus::Subsumed; // a true literal
            }
        }
    }
    if (open_count == 0) return PropStatus::Fail;
    if (open_count > 1) return PropStatus::Ok;
    return s.assign(open, open_positive ? 1 : 0) ? PropStatus::Subsumed : PropStatus::Fail;
}

Entailment Clause::entailment(const Store& s) const {
    bool open = false;
    for (const bool positive : {true, false}) {
        for (VarId x : positive ? positive_ : negative_) {
            if (!s.fixed(x)) {
                open = true;
            } else if ((s.value(x) == 1) == positive) {
                return Entailment::True;
            }
        }
    }
    return open ? Entailment::Unknown : Entailment::False;
}

PropStatus OddParity::propagate(Store& s) {
    VarId open = -1;
    int open_count = 0;
    bool odd = false;
    for (VarId x : vars_) {
        if (!s.set_bounds(x, 0, 1)) return PropStatus::Fail;
        if (!s.fixed(x)) {
            open = x;
            ++open_count;
        } else if (s.value(x) == 1) {
            odd = !odd;
        }
    }
    if (open_count == 0) return odd ? PropStatus::Subsumed : PropStatus::Fail;
    if (open_count > 1) return PropStatus::Ok;
    return s.assign(open, odd ? 0 : 1) ? PropStatus::Subsumed : PropStatus::Fail;
}

Entailment OddParity::entailment(const Store& s) const {
    bool odd = false;
    for (VarId x : vars_) {
        if (!s.fixed(x)) return Entailment::Unknown;
        if (s.value(x) == 1) odd = !odd;
    }
    return odd ? Entailment::True : Entailment::False;
}

} // namespace constrint::engine
