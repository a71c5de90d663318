// The remainder of truncated division (MiniZinc's div and mod round towards zero): divisor != 0,
// |remainder| < |divisor|, and the remainder is 0 or has the sign of the dividend. With Times and
// Plus on x = y * q + r it defines FlatZinc's int_div and int_mod (the floor forms use Remainder).
#pragma once

#include "engine/store.hpp"

namespace constrint::engine {

class TruncatedRemainder final : public Propagator {
  public:
    TruncatedRemainder(VarId remainder, VarId dividend, VarId divisor)
        : remainder_(remainder), dividend_(dividend), divisor_(divisor) {}
    PropStatus propagate(Store& s) override;
    Entailment entailment(const Store& s) const override;
    std::vector<Subscription> subscriptions() const override;
    const char* name() const override { return "truncated_remainder"; }

  private:
    VarId remainder_, dividend_, divisor_;
};

}  // namespace constrint::engine
