// Arithmetic modulo an odd n of up to Limbs 64-bit words in Montgomery form (R = 2^(64 Limbs)), for
// the elliptic curve method: a product is one pass of word multiplications (CIOS, coarsely
// integrated operand scanning) with no allocation, where cpp_int allocates and divides.
#pragma once

#include "constrint/integer.hpp"

#include <array>
#include <cstdint>

namespace constrint::detail {

template <int Limbs> class MontgomeryLimbs {
  public:
    using Residue = std::array<std::uint64_t, Limbs>;

    // n odd, 1 < n < 2^(64 Limbs).
    explicit MontgomeryLimbs(const Integer& n) : n_big_(n), n_(limbs_of(n)) {
        std::uint64_t inverse = n_[0]; // correct to 3 bits for odd n; each Newton step doubles them
        for (int i = 0; i < 5; ++i)
            inverse *= 2 - n_[0] * inverse;
        minus_inverse_ = -inverse;
    }

    // v (any integer) in Montgomery form: v * R mod n.
    Residue from_integer(const Integer& v) const { return limbs_of(floor_mod(v << (64 * Limbs), n_big_)); }
    // The stored word value (v * R mod n): its gcd with n is the gcd of v with n, as R is prime to n.
    Integer raw_value(const Residue& a) const {
        Integer v = 0;
        for (int i = Limbs - 1; i >= 0; --i)
            v = (v << 64) | Integer(a[i]);
        return v;
    }

    // a * b / R mod n, for a, b < n.
    Residue multiply(const Residue& a, const Residue& b) const {
        __extension__ typedef unsigned __int128 Wide; // GCC and Clang have it; not ISO C++
        std::array<std::uint64_t, Limbs + 2> t{};
        for (int i = 0; i < Limbs; ++i) {
            std::uint64_t carry = 0;
            for (int j = 0; j < Limbs; ++j) {
                const Wide s = static_cast<Wide>(a[j]) * b[i] + t[j] + carry;
                t[j] = static_cast<std::uint64_t>(s);
                carry = static_cast<std::uint64_t>(s >> 64);
            }
            Wide s = static_cast<Wide>(t[Limbs]) + carry;
            t[Limbs] = static_cast<std::uint64_t>(s);
            t[Limbs + 1] = static_cast<std::uint64_t>(s >> 64);
            // Add m * n with m chosen so that the lowest word becomes 0, and shift down a word.
            const std::uint64_t m = t[0] * minus_inverse_;
            s = static_cast<Wide>(m) * n_[0] + t[0];
            carry = static_cast<std::uint64_t>(s >> 64);
            for (int j = 1; j < Limbs; ++j) {
                s = static_cast<Wide>(m) * n_[j] + t[j] + carry;
                t[j - 1] = static_cast<std::uint64_t>(s);
                carry = static_cast<std::uint64_t>(s >> 64);
            }
            s = static_cast<Wide>(t[Limbs]) + carry;
            t[Limbs - 1] = static_cast<std::uint64_t>(s);
            t[Limbs] = t[Limbs + 1] + static_cast<std::uint64_t>(s >> 64);
        }
        Residue r;
        for (int i = 0; i < Limbs; ++i)
            r[i] = t[i];
        if (t[Limbs] != 0 || !less(r, n_)) subtract_in_place(r, n_); // t < 2n
        return r;
    }
    Residue add(const Residue& a, const Residue& b) const {
        Residue r = a;
        if (add_in_place(r, b) || !less(r, n_)) subtract_in_place(r, n_); // carried, or r >= n
        return r;
    }
    Residue subtract(const Residue& a, const Residue& b) const {
        Residue r = a;
        if (subtract_in_place(r, b)) add_in_place(r, n_); // borrowed: a < b
        return r;
    }

  private:
    static Residue limbs_of(Integer v) {
        Residue r{};
        for (int i = 0; i < Limbs; ++i, v >>= 64)
            r[i] = static_cast<std::uint64_t>(v & ~std::uint64_t{0});
        return r;
    }
    static bool less(const Residue& a, const Residue& b) {
        for (int i = Limbs - 1; i >= 0; --i) {
            if (a[i] != b[i]) return a[i] < b[i];
        }
        return false;
    }
    // r -= b; true when it borrowed (r was below b).
    static bool subtract_in_place(Residue& r, const Residue& b) {
        std::uint64_t borrow = 0;
        for (int i = 0; i < Limbs; ++i) {
            const std::uint64_t d = r[i] - b[i];
            const std::uint64_t next = (r[i] < b[i]) + (d < borrow);
            r[i] = d - borrow;
            borrow = next;
        }
        return borrow != 0;
    }
    // r += b; true when it carried out of the top word.
    static bool add_in_place(Residue& r, const Residue& b) {
        std::uint64_t carry = 0;
        for (int i = 0; i < Limbs; ++i) {
            const std::uint64_t s = r[i] + carry;
            carry = s < carry;
            r[i] = s + b[i];
            carry += r[i] < s;
        }
        return carry != 0;
    }

    Integer n_big_;
    Residue n_;
    std::uint64_t minus_inverse_ = 0;
};

} // namespace constrint::detail
