#include "propagators/arithmetic.hpp"

namespace constrint::engine {

PropStatus Absolute::propagate(Store& s) {
    if (s.min(x_) >= 0) { // result = x
        if (!s.intersect(result_, s.dom(x_)) || !s.intersect(x_, s.dom(result_))) return PropStatus::Fail;
        return PropStatus::Ok;
    }
    if (s.max(x_) <= 0) { // result = -x
        if (!s.intersect(result_, s.dom(x_).negated()) || !s.intersect(x_, s.dom(result_).negated())) {
            return PropStatus::Fail;
        }
        return PropStatus::Ok;
    }
    // x spans 0: |x| lies in [0, max(-min, max)].
    const Integer abs_max = std::max(Integer(-s.min(x_)), s.max(x_));
    if (!s.set_bounds(result_, 0, abs_max)) return PropStatus::Fail;
    const Integer& r_hi = s.max(result_);
    if (!s.set_bounds(x_, -r_hi, r_hi)) return PropStatus::Fail;
    const Integer& r_lo = s.min(result_);
    if (r_lo > 0 && !s.remove_range(x_, -r_lo + 1, r_lo - 1)) return PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment Absolute::entailment(const Store& s) const {
    if (!s.fixed(result_) || !s.fixed(x_)) return Entailment::Unknown;
    const Integer& v = s.value(x_);
    return s.value(result_) == (v < 0 ? Integer(-v) : v) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Absolute::subscriptions() const {
    return {{result_, Event::Domain}, {x_, Event::Domain}};
}

} // namespace constrint::engine
