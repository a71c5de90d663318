#include "propagators/arithmetic.hpp"

namespace constrint::engine {

namespace {

// Largest r with r^k <= n and smallest r with r^k >= n, for any sign of n and odd k.
Integer signed_floor_root(const Integer& n, unsigned k) {
    return n >= 0 ? floor_root(n, k) : Integer(-ceil_root(-n, k));
}
Integer signed_ceil_root(const Integer& n, unsigned k) {
    return n >= 0 ? ceil_root(n, k) : Integer(-floor_root(-n, k));
}

} // namespace

PropStatus Power::propagate(Store& s) {
    return propagate_power(s, result_, base_, exponent_);
}

namespace {

// One pass: the result from the base's bounds, then the base from integer roots of the result's.
PropStatus power_pass(Store& s, VarId result, VarId base, unsigned k) {
    if (s.fixed(base))
        return s.assign(result, power(s.value(base), k)) ? PropStatus::Subsumed : PropStatus::Fail;
    if (k % 2 == 1) { // monotone: bounds map to bounds, roots map back
        if (!s.set_bounds(result, power(s.min(base), k), power(s.max(base), k))) return PropStatus::Fail;
        if (!s.set_bounds(base, signed_ceil_root(s.min(result), k), signed_floor_root(s.max(result), k))) {
            return PropStatus::Fail;
        }
        return PropStatus::Ok;
    }
    // Even exponent: result = |base|^k >= 0.
    const Integer &lo = s.min(base), &hi = s.max(base);
    const Integer abs_max = std::max(Integer(-lo), hi);
    const Integer abs_min = lo > 0 ? lo : hi < 0 ? Integer(-hi) : Integer(0);
    if (!s.set_bounds(result, power(abs_min, k), power(abs_max, k))) return PropStatus::Fail;
    const Integer root_hi = floor_root(s.max(result), k);
    const Integer root_lo = ceil_root(s.min(result), k);
    if (!s.set_bounds(base, -root_hi, root_hi)) return PropStatus::Fail;
    if (root_lo > 0 && !s.remove_range(base, -root_lo + 1, root_lo - 1)) return PropStatus::Fail;
    return PropStatus::Ok;
}

} // namespace

// Roots of the result's bounds can move the base's bounds, whose powers move the result's again
// (result in [5, 30], base in [1, 10]: base in [2, 3], then result in [8, 27]); the passes repeat
// until no bound moves, usually two or three, so one run is the propagator's fixpoint. Against a
// result with holes they can creep (the fuzzer found a tiling model whose run went past 60 s with a
// 50 ms limit): after kRoundsPerRun passes the run ends and is scheduled again, after a limit check.
PropStatus propagate_power(Store& s, VarId result, VarId base, unsigned k) {
    for (int round = 0; round < kRoundsPerRun; ++round) {
        const Integer before = s.max(result) - s.min(result) + s.max(base) - s.min(base);
        const PropStatus status = power_pass(s, result, base, k);
        if (status != PropStatus::Ok) return status;
        if (s.max(result) - s.min(result) + s.max(base) - s.min(base) == before) return PropStatus::Ok;
    }
    s.reschedule_running();
    return PropStatus::Ok;
}

Entailment Power::entailment(const Store& s) const {
    if (!s.fixed(result_) || !s.fixed(base_)) return Entailment::Unknown;
    return s.value(result_) == power(s.value(base_), exponent_) ? Entailment::True : Entailment::False;
}

std::vector<Subscription> Power::subscriptions() const {
    return {{result_, Event::Bounds}, {base_, Event::Bounds}};
}

} // namespace constrint::engine
