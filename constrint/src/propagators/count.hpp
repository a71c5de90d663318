// count(x, y) == c: c is the number of x_i equal to y (MiniZinc's count / count_eq, Gecode's
// count). With y fixed: c lies between the x_i fixed to y and those that may still be y; once
// either bound is reached, the undecided x_i are all made y or all made different from it.
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class Count final : public Propagator {
  public:
    Count(std::vector<VarId> vars, VarId value, VarId count)
        : vars_(std::move(vars)), value_(value), count_(count) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "count"; }

  private:
    std::vector<VarId> vars_;
    VarId value_, count_;
};

} // namespace constrint::engine
