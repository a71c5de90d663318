// FNV-1a, 64 bits: the cache's file names and checksums (fast, dependency-free; not cryptographic,
// which is why a cache file also stores its full key and a reader compares it).
#pragma once

#include <cstdint>
#include <string_view>

namespace flashrnn::fused {

class Fnv1a {
  public:
    Fnv1a& add(std::string_view bytes) {
        for (unsigned char c : bytes) {
            hash_ ^= c;
            hash_ *= 0x100000001b3ULL;
        }
        return *this;
    }
    std::uint64_t value() const { return hash_; }

  private:
    std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

inline std::uint64_t fnv1a(std::string_view bytes) {
    return Fnv1a().add(bytes).value();
}

} // namespace flashrnn::fused
