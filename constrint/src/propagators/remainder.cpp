#include "propagators/arithmetic.hpp"

#include <algorithm>
#include <memory>

namespace constrint::engine {

PropStatus Remainder::propagate(Store& s) {
    if (!s.remove(divisor_, 0)) return PropStatus::Fail;
    // A positive remainder needs a divisor above it, a negative one a divisor below it.
    if (s.min(remainder_) > 0 && !s.set_min(divisor_, s.min(remainder_) + 1)) return PropStatus::Fail;
    if (s.max(remainder_) < 0 && !s.set_max(divisor_, s.max(remainder_) - 1)) return PropStatus::Fail;
    const Integer lo = s.min(divisor_) > 0 ? Integer(0) : Integer(s.min(divisor_) + 1);
    const Integer hi = s.max(divisor_) < 0 ? Integer(0) : Integer(s.max(divisor_) - 1);
    if (!s.set_bounds(remainder_, lo, hi)) return PropStatus::Fail;
    if (s.min(divisor_) > 0 && !s.set_min(divisor_, s.min(remainder_) + 1)) return PropStatus::Fail;
    if (s.max(divisor_) < 0 && !s.set_max(divisor_, s.max(remainder_) - 1)) return PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment Remainder::entailment(const Store& s) const {
    if (!s.fixed(remainder_) || !s.fixed(divisor_)) return Entailment::Unknown;
    const Integer &r = s.value(remainder_), &d = s.value(divisor_);
    const bool holds = d > 0 ? (r >= 0 && r < d) : d < 0 ? (r <= 0 && r > d) : false;
    return holds ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Remainder::subscriptions() const {
    return {{remainder_, Event::Bounds}, {divisor_, Event::Domain}};
}

void post_division(Store& s, VarId x, VarId y, VarId quotient, VarId remainder, Rounding rounding) {
    const std::initializer_list<Integer> corners{s.min(y) * s.min(quotient), s.min(y) * s.max(quotient),
                                                 s.max(y) * s.min(quotient), s.max(y) * s.max(quotient)};
    const VarId product = s.new_var(Domain::range(std::min(corners), std::max(corners)));
    s.add_propagator(std::make_unique<Times>(product, y, quotient));
    s.add_propagator(std::make_unique<Plus>(x, product, remainder));
    if (rounding == Rounding::Floor)
        s.add_propagator(std::make_unique<Remainder>(remainder, y));
    else
        s.add_propagator(std::make_unique<TruncatedRemainder>(remainder, x, y));
}

} // namespace constrint::engine
