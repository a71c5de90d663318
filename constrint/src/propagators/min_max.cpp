#include "propagators/arithmetic.hpp"

namespace constrint::engine {

namespace {

// result = min(a, b) on mirrored bounds: for max, every bound is read and written negated.
struct Mirror {
    Store& s;
    bool negate;
    Integer lo(VarId x) const { return negate ? Integer(-s.max(x)) : s.min(x); }
    Integer hi(VarId x) const { return negate ? Integer(-s.min(x)) : s.max(x); }
    bool set_lo(VarId x, const Integer& v) const { return negate ? s.set_max(x, -v) : s.set_min(x, v); }
    bool set_hi(VarId x, const Integer& v) const { return negate ? s.set_min(x, -v) : s.set_max(x, v); }
};

} // namespace

PropStatus MinMax::propagate(Store& s) {
    const Mirror m{s, is_max_};
    // One operand is certainly the smaller one: result equals it.
    for (auto [x, y] : {std::pair{a_, b_}, std::pair{b_, a_}}) {
        if (m.hi(x) <= m.lo(y) || m.hi(result_) < m.lo(y)) {
            const bool certain = m.hi(x) <= m.lo(y);
            if (!s.intersect(result_, s.dom(x)) || !s.intersect(x, s.dom(result_))) return PropStatus::Fail;
            if (!m.set_lo(y, m.lo(x))) return PropStatus::Fail; // result = x is the smaller one
            return certain && s.fixed(result_) && s.fixed(x) ? PropStatus::Subsumed : PropStatus::Ok;
        }
    }
    if (!m.set_hi(result_, std::min(m.hi(a_), m.hi(b_)))) return PropStatus::Fail;
    if (!m.set_lo(result_, std::min(m.lo(a_), m.lo(b_)))) return PropStatus::Fail;
    if (!m.set_lo(a_, m.lo(result_)) || !m.set_lo(b_, m.lo(result_))) return PropStatus::Fail;
    return PropStatus::Ok;
}

Entailment MinMax::entailment(const Store& s) const {
    if (!s.fixed(result_) || !s.fixed(a_) || !s.fixed(b_)) return Entailment::Unknown;
    const Integer& expected =
        is_max_ ? std::max(s.value(a_), s.value(b_)) : std::min(s.value(a_), s.value(b_));
    return s.value(result_) == expected ? Entailment::True : Entailment::False;
}

std::vector<Subscription> MinMax::subscriptions() const {
    return {{result_, Event::Domain}, {a_, Event::Domain}, {b_, Event::Domain}};
}

} // namespace constrint::engine
