#pragma once

namespace hetsched {
inline constexpr const char* kVersionString = "0.1.0";
}  // namespace hetsched
