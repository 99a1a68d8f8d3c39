// Reading vectors and strings out of a verified FlatBuffer, the one way every
// loader of a hetsched file does it (.hsg graphs, .hsp programs, .vgf files).
//
// Vectors are copied bytewise rather than read element by element: the
// verifier of FlatBuffers 2.0 checks a vector's length field for 4-byte
// alignment but not its elements for their own, so a crafted file can leave
// int64 elements at an address that is 4 mod 8, and Vector::Get there is a
// misaligned load (undefined behaviour; the VGF fuzz target found it).
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

namespace hetsched {

template <typename T>
std::vector<T> copy_fb_vector(const flatbuffers::Vector<T>* v) {
  static_assert(std::endian::native == std::endian::little, "FlatBuffers data is little-endian");
  static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>, "scalars only");
  if (!v) return {};
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

inline std::string copy_fb_string(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

}  // namespace hetsched
