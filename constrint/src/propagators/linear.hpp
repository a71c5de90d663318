// sum(coefficient_i * x_i) relation constant over many variables: one propagator, O(n) per run,
// instead of a tree of n - 1 auxiliary sums (FlatZinc's int_lin_* and bool_lin_*).
#pragma once

#include "engine/store.hpp"

#include <cstdint>

namespace constrint::engine {

struct LinearTerm {
    Integer coefficient;  // never 0
    VarId var;
};

enum class LinearRelation : std::uint8_t { Eq, Le, Ne };

// Bounds-consistent for Eq and Le (Le reaches its fixpoint in one pass, Eq repeats until nothing
// changes); Ne removes the one value left to the last unfixed variable.
class Linear final : public Propagator {
  public:
    Linear(std::vector<LinearTerm> terms, LinearRelation relation, Integer constant)
        : terms_(std::move(terms)), relation_(relation), constant_(std::move(constant)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    bool idempotent() const override { return relation_ != LinearRelation::Eq; }
    const char* name() const override { return "linear"; }

  private:
    PropStatus propagate_le(Store& s, bool& changed);
    PropStatus propagate_ge(Store& s, bool& changed);
    PropStatus propagate_ne(Store& s);
    std::vector<LinearTerm> terms_;
    LinearRelation relation_;
    Integer constant_;
};

}  // namespace constrint::engine
