// Boolean clauses and parity over 0/1 variables (FlatZinc's bool_clause, array_bool_and/or via
// clauses, array_bool_xor).
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

// At least one of `positive` is 1 or one of `negative` is 0. Unit propagation: once every literal
// but one is false, that one is made true.
class Clause final : public Propagator {
  public:
    Clause(std::vector<VarId> positive, std::vector<VarId> negative)
        : positive_(std::move(positive)), negative_(std::move(negative)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override {
        return subscribe(negative_, Event::Fixed, subscribe(positive_, Event::Fixed));
    }
    bool idempotent() const override { return true; }
    const char* name() const override { return "clause"; }

  private:
    std::vector<VarId> positive_, negative_;
};

// The sum of the 0/1 variables is odd: once one variable is left open, it is fixed.
class OddParity final : public Propagator {
  public:
    explicit OddParity(std::vector<VarId> vars) : vars_(std::move(vars)) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override { return subscribe(vars_, Event::Fixed); }
    bool idempotent() const override { return true; }
    const char* name() const override { return "odd_parity"; }

  private:
    std::vector<VarId> vars_;
};

} // namespace constrint::engine
