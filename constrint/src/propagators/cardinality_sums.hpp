// The two sums a global cardinality constraint implies, for counts c_k of constant values v_k in the
// variables x_j (MiniZinc's count(x, v_k) == c_k for several k over one array):
//   sum_k c_k       == #{j : x_j in V}
//   sum_k v_k * c_k == sum of the x_j in V
// Each Count sees one value; these sums see them all. Bounds reasoning on both: a variable whose
// domain lies inside V contributes exactly x_j, one that only meets V contributes 0 or a value of V.
// In the magic sequence (x_i = count(x, i)) they are the redundant constraints sum(x) = n and
// sum(i * x_i) = n that make the search short.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class CardinalitySums final : public Propagator {
  public:
    // values: distinct constants; counts[k] counts values[k].
    CardinalitySums(std::vector<VarId> vars, std::vector<Integer> values, std::vector<VarId> counts);
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "cardinality_sums"; }

  private:
    // What x_j contributes to the sums: whether it lies in V ([0, 1]) and the value it adds
    // (x_j when in V, otherwise 0).
    struct Contribution {
        int in_lo, in_hi;
        Integer lo, hi;
        bool inside; // the domain lies in V: the contribution is x_j itself
    };
    Contribution contribution(const Domain& d) const;

    std::vector<VarId> vars_;
    std::vector<Integer> values_;
    std::vector<VarId> counts_;
    Domain value_set_;
    std::vector<Contribution> scratch_; // per run (kept to avoid an allocation per run)
};

} // namespace constrint::engine
