# The CPU delegate (hetsched_cpu_delegate), included from delegates/CMakeLists.txt:
# the portable kernels (kernels/), the reference evaluator (cpu_reference.h)
# XNNPACK segments (xnnpack/: Debian's libxnnpack-dev snapshot, private to
# this library, on hetsched's own implementation of the pthreadpool API,
# xnnpack/threadpool.h) and the fast kernels for what XNNPACK lacks (fast/).
file(GLOB hetsched_cpu_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc
     ${CMAKE_CURRENT_LIST_DIR}/kernels/*.cc ${CMAKE_CURRENT_LIST_DIR}/xnnpack/*.cc ${CMAKE_CURRENT_LIST_DIR}/fast/*.cc)
hetsched_library(hetsched_cpu_delegate SOURCES ${hetsched_cpu_sources}
                 DEPS hetsched_delegate_contract hetsched_graph hetsched_memory spdlog::spdlog)

find_path(XNNPACK_INCLUDE_DIR xnnpack.h REQUIRED)
find_library(XNNPACK_LIBRARY XNNPACK REQUIRED)
target_include_directories(hetsched_cpu_delegate PRIVATE ${XNNPACK_INCLUDE_DIR})
# Not libpthreadpool: xnnpack/threadpool.cc defines its API, and XNNPACK's
# calls bind to those definitions (libpthreadpool.so.0 still loads as
# XNNPACK's dependency, unused).
target_link_libraries(hetsched_cpu_delegate PRIVATE ${XNNPACK_LIBRARY})

# The fast kernels' loops clamp and select with float compares, which GCC
# if-converts (and so vectorises) only when it may assume that compares do
# not trap; nothing in hetsched reads the FP exception flags. Their 16-lane
# generic vectors are passed between always-inline functions only, so GCC's
# note that such a return changes the ABI without AVX-512 does not apply.
file(GLOB hetsched_cpu_fast_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fast/*.cc)
set_source_files_properties(${hetsched_cpu_fast_sources} PROPERTIES COMPILE_OPTIONS "-fno-trapping-math;-Wno-psabi")
