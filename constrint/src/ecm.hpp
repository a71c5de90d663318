// Lenstra's elliptic curve method (ECM) on Montgomery curves: finds a factor p of n in time that
// grows with p, not with n, where Pollard-Brent rho needs about sqrt(p) steps (2^30 for a 60-bit p).
#pragma once

#include "constrint/integer.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace constrint::detail {

// Numbers up to this many bits are in reach (the limb counts the curve arithmetic is built for).
inline constexpr unsigned kEcmMaxBits = 1024;

// A non-trivial factor of the odd composite n (n < 2^kEcmMaxBits), or nothing when the work budget
// is spent or `stop` (asked every few hundred curve operations) says yes. The curves run in levels
// of growing bounds (kEcmLevels in ecm.cpp); a curve costs about 40 * b1 * limbs^2 units of work
// (64 x 64-bit word products), which it takes from the budget before it starts.
std::optional<Integer> ecm_factor(const Integer& n, std::uint64_t& work_budget,
                                  const std::function<bool()>& stop);

} // namespace constrint::detail
