// hetsched's release, for code built against it (the project() version in
// CMakeLists.txt; test/api_test.cc checks the two agree).
#pragma once

#define HETSCHED_VERSION_MAJOR 0
#define HETSCHED_VERSION_MINOR 1
#define HETSCHED_VERSION_PATCH 0
#define HETSCHED_VERSION "0.1.0"

namespace hetsched {
inline constexpr const char* kVersionString = HETSCHED_VERSION;
}  // namespace hetsched
