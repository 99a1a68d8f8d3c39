# The Vulkan delegate (hetsched_vulkan_delegate), included from
# delegates/CMakeLists.txt (so the custom commands live in that directory's
# scope): every shaders/*.comp is compiled by glslc at build time and
# embedded as a header (cmake/spirv.cmake), e.g. shaders/gemm.comp →
# "delegates/vulkan/shaders/gemm_spv.h".
include(${PROJECT_SOURCE_DIR}/cmake/spirv.cmake)

file(GLOB hetsched_vulkan_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
hetsched_library(hetsched_vulkan_delegate SOURCES ${hetsched_vulkan_sources}
                 DEPS hetsched_delegate_contract hetsched_graph hetsched_memory hetsched_sync hetsched_shared_gpu
                      spdlog::spdlog)

file(GLOB hetsched_vulkan_shaders CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.comp)
file(GLOB hetsched_vulkan_shader_includes CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.glsl
     ${PROJECT_SOURCE_DIR}/shared_gpu/shaders/*.glsl)
hetsched_embed_spirv(hetsched_vulkan_delegate ${hetsched_vulkan_shaders})
# Every kernel but the Casts again with 16-bit storage between kernels
# (shared_gpu/shaders/half_io.glsl): <stem>_half_spv.h.
set(hetsched_vulkan_half_shaders ${hetsched_vulkan_shaders})
list(FILTER hetsched_vulkan_half_shaders EXCLUDE REGEX "/cast_[^/]*\\.comp$")
hetsched_embed_spirv_half(hetsched_vulkan_delegate ${hetsched_vulkan_half_shaders})

# glslc resolves #include "common.glsl" itself; hetsched_embed_spirv only
# knows the .comp file, so the shared includes are added as dependencies here.
hetsched_spirv_include_depends("" INCLUDES ${hetsched_vulkan_shader_includes} SHADERS ${hetsched_vulkan_shaders})
hetsched_spirv_include_depends(_half INCLUDES ${hetsched_vulkan_shader_includes} SHADERS ${hetsched_vulkan_half_shaders})
