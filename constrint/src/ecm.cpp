#include "ecm.hpp"

#include "montgomery_limbs.hpp"

#include <boost/multiprecision/integer.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

namespace constrint::detail {

namespace {

// The primes up to `limit` (sieve of Eratosthenes).
std::vector<std::uint32_t> primes_up_to(std::uint32_t limit) {
    std::vector<bool> composite(limit + 1, false);
    std::vector<std::uint32_t> primes;
    for (std::uint64_t p = 2; p <= limit; ++p) {
        if (composite[p]) continue;
        primes.push_back(static_cast<std::uint32_t>(p));
        for (std::uint64_t m = p * p; m <= limit; m += p)
            composite[m] = true;
    }
    return primes;
}

// Points of the curve B y^2 = x^3 + A x^2 + x in projective X : Z (y is never needed): doubling and
// differential addition cost 5 and 6 multiplications, whatever the point.
template <int Limbs> class MontgomeryCurve {
  public:
    using Arithmetic = MontgomeryLimbs<Limbs>;
    using Residue = typename Arithmetic::Residue;
    struct Point {
        Residue x, z;
    };

    MontgomeryCurve(const Arithmetic& mod, const Residue& a24) : mod_(mod), a24_(a24) {}

    Point twice(const Point& p) const {
        const Residue sum = mod_.add(p.x, p.z), difference = mod_.subtract(p.x, p.z);
        const Residue sum2 = mod_.multiply(sum, sum), difference2 = mod_.multiply(difference, difference);
        const Residue cross = mod_.subtract(sum2, difference2); // 4 x z
        return {mod_.multiply(sum2, difference2),
                mod_.multiply(cross, mod_.add(difference2, mod_.multiply(a24_, cross)))};
    }
    // p + q, given p - q.
    Point sum(const Point& p, const Point& q, const Point& difference) const {
        const Residue u = mod_.multiply(mod_.subtract(p.x, p.z), mod_.add(q.x, q.z));
        const Residue v = mod_.multiply(mod_.add(p.x, p.z), mod_.subtract(q.x, q.z));
        const Residue plus = mod_.add(u, v), minus = mod_.subtract(u, v);
        return {mod_.multiply(difference.z, mod_.multiply(plus, plus)),
                mod_.multiply(difference.x, mod_.multiply(minus, minus))};
    }
    // k * p by the Montgomery ladder (k >= 1).
    Point multiple(const Point& p, std::uint64_t k) const {
        Point low = p, high = twice(p); // high - low == p throughout
        for (int bit = 62 - std::countl_zero(k); bit >= 0; --bit) {
            if ((k >> bit) & 1) {
                low = sum(high, low, p);
                high = twice(high);
            } else {
                high = sum(high, low, p);
                low = twice(low);
            }
        }
        return low;
    }

  private:
    const Arithmetic& mod_;
    Residue a24_;
};

// Stage 2 splits each prime q in (b1, b2] as q = k * D +- j with j < D / 2 prime to D (b1 >= 2 D).
constexpr std::uint32_t kGiantStep = 210;

template <int Limbs> class Ecm {
  public:
    using Arithmetic = MontgomeryLimbs<Limbs>;
    using Curve = MontgomeryCurve<Limbs>;
    using Point = typename Curve::Point;
    using Residue = typename Arithmetic::Residue;

    Ecm(const Integer& n, const std::function<bool()>& stop) : n_(n), mod_(n), stop_(stop) {}

    // A factor of n from curve number `sigma` (Suyama's parametrisation) with bounds b1 and b2 from
    // `primes` (all primes up to b2); 1 when the curve finds none, n when it finds all at once.
    std::optional<Integer> run_curve(std::uint32_t sigma, std::uint32_t b1, std::uint32_t b2,
                                     const std::vector<std::uint32_t>& primes) {
        // u = sigma^2 - 5, v = 4 sigma: x = u^3, z = v^3, (A + 2) / 4 = (v - u)^3 (3u + v) / (16 u^3 v).
        const Integer u = Integer(sigma) * sigma - 5, v = Integer(4) * sigma;
        const Integer denominator = floor_mod(16 * u * u * u * v, n_);
        const Integer g = gcd(denominator, n_);
        if (g != 1) return g;
        const Integer a24 = floor_mod(power(v - u, 3) * (3 * u + v) * mod_inverse(denominator, n_), n_);
        const Curve curve(mod_, mod_.from_integer(a24));
        Point p{mod_.from_integer(u * u * u), mod_.from_integer(v * v * v)};

        // Stage 1: p times every prime power up to b1.
        std::size_t i = 0;
        for (; i < primes.size() && primes[i] <= b1; ++i) {
            std::uint64_t q = primes[i];
            while (q * primes[i] <= b1)
                q *= primes[i];
            p = curve.multiple(p, q);
            if (i % 256 == 255 && stop_ && stop_()) return std::nullopt;
        }
        Integer found = gcd(mod_.raw_value(p.z), n_);
        if (found != 1) return found;

        // Stage 2: is q * p the point at infinity modulo a factor for one prime q in (b1, b2]? Then
        // x(k D p) = x(j p) there for q = k D +- j: the products of X_k Z_j - X_j Z_k collect it.
        std::vector<Point> baby(kGiantStep / 2 + 1);
        const Point twice_p = curve.twice(p);
        baby[1] = p;
        baby[3] = curve.sum(twice_p, p, p);
        for (std::uint32_t j = 5; j < kGiantStep / 2; j += 2)
            baby[j] = curve.sum(baby[j - 2], twice_p, baby[j - 4]);
        const Point step = curve.multiple(p, kGiantStep);
        // Every prime q > b1 >= 2 D lies above k D - D / 2 for k = floor(b1 / D) >= 2.
        std::uint64_t k = b1 / kGiantStep;
        Point giant = curve.multiple(step, k), previous = curve.multiple(step, k - 1);
        Residue accumulated = mod_.from_integer(1);
        for (std::size_t counted = 0; i < primes.size() && primes[i] <= b2; ++i, ++counted) {
            const std::uint64_t q = primes[i];
            while (q > k * kGiantStep + kGiantStep / 2) { // next giant step: (k + 1) D p
                const Point next = curve.sum(giant, step, previous);
                previous = giant;
                giant = next;
                ++k;
            }
            const std::uint64_t j = q > k * kGiantStep ? q - k * kGiantStep : k * kGiantStep - q;
            const Point& b = baby[j];
            accumulated = mod_.multiply(
                accumulated, mod_.subtract(mod_.multiply(giant.x, b.z), mod_.multiply(b.x, giant.z)));
            if (counted % 1024 == 1023 && stop_ && stop_()) return std::nullopt;
        }
        return gcd(mod_.raw_value(accumulated), n_);
    }

  private:
    Integer n_;
    Arithmetic mod_;
    const std::function<bool()>& stop_;
};

// Bounds and curve counts from GMP-ECM's table for factors of 15, 20 and 25 digits (50, 66 and 83
// bits): each level finds such a factor with probability about 1 - 1/e. Stage 2 here is the simple
// one (b2 = 100 b1), weaker than GMP-ECM's, but measured on products of two random primes the
// second level found 60- and 64-bit factors in 2 to 224 curves, 0.1 to 3.5 s (docs/solver.md).
struct EcmLevel {
    std::uint32_t b1;
    std::uint32_t curves;
};
constexpr std::array<EcmLevel, 3> kEcmLevels{{{2000, 25}, {11000, 90}, {50000, 300}}};
static_assert(kEcmLevels[0].b1 >= 2 * kGiantStep, "stage 2 starts its giant steps at floor(b1 / D) >= 2");

template <int Limbs>
std::optional<Integer> ecm_with(const Integer& n, std::uint64_t& work_budget,
                                const std::function<bool()>& stop) {
    Ecm<Limbs> ecm(n, stop);
    std::uint32_t sigma = 6; // Suyama's sigma > 5; each curve takes the next
    for (const EcmLevel& level : kEcmLevels) {
        const std::uint32_t b2 = 100 * level.b1;
        const std::uint64_t cost = std::uint64_t{40} * level.b1 * Limbs * Limbs;
        const std::vector<std::uint32_t> primes = primes_up_to(b2);
        for (std::uint32_t c = 0; c < level.curves; ++c) {
            if (work_budget < cost) return std::nullopt;
            work_budget -= cost;
            const std::optional<Integer> found = ecm.run_curve(sigma++, level.b1, b2, primes);
            if (!found) return std::nullopt; // stopped
            if (*found != 1 && *found != n) return *found;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<Integer> ecm_factor(const Integer& n, std::uint64_t& work_budget,
                                  const std::function<bool()>& stop) {
    const std::size_t bits = boost::multiprecision::msb(n) + 1;
    // Limb counts in powers of two: four instantiations cover every size up to kEcmMaxBits.
    if (bits <= 128) return ecm_with<2>(n, work_budget, stop);
    if (bits <= 256) return ecm_with<4>(n, work_budget, stop);
    if (bits <= 512) return ecm_with<8>(n, work_budget, stop);
    if (bits <= kEcmMaxBits) return ecm_with<16>(n, work_budget, stop);
    return std::nullopt;
}

} // namespace constrint::detail
