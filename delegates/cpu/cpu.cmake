# The CPU delegate (hetsched_cpu_delegate), included from delegates/CMakeLists.txt:
# the portable kernels (kernels/), the reference evaluator (cpu_reference.h)
# XNNPACK segments (xnnpack/: Debian's libxnnpack-dev snapshot and the
# pthreadpool its runtimes run on, both private to this library) and the fast
# kernels for what XNNPACK lacks (fast/).
file(GLOB hetsched_cpu_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc
     ${CMAKE_CURRENT_LIST_DIR}/kernels/*.cc ${CMAKE_CURRENT_LIST_DIR}/xnnpack/*.cc ${CMAKE_CURRENT_LIST_DIR}/fast/*.cc)
hetsched_library(hetsched_cpu_delegate SOURCES ${hetsched_cpu_sources}
                 DEPS hetsched_delegate_contract hetsched_graph TBB::tbb spdlog::spdlog)

find_path(XNNPACK_INCLUDE_DIR xnnpack.h REQUIRED)
find_library(XNNPACK_LIBRARY XNNPACK REQUIRED)
find_library(PTHREADPOOL_LIBRARY pthreadpool REQUIRED)
target_include_directories(hetsched_cpu_delegate PRIVATE ${XNNPACK_INCLUDE_DIR})
target_link_libraries(hetsched_cpu_delegate PRIVATE ${XNNPACK_LIBRARY} ${PTHREADPOOL_LIBRARY})

# The fast kernels' loops clamp and select with float compares, which GCC
# if-converts (and so vectorises) only when it may assume that compares do
# not trap; nothing in hetsched reads the FP exception flags. Their 16-lane
# generic vectors are passed between always-inline functions only, so GCC's
# note that such a return changes the ABI without AVX-512 does not apply.
file(GLOB hetsched_cpu_fast_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fast/*.cc)
set_source_files_properties(${hetsched_cpu_fast_sources} PROPERTIES COMPILE_OPTIONS "-fno-trapping-math;-Wno-psabi")
