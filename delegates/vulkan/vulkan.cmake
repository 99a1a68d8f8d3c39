# The Vulkan delegate's shaders, included from delegates/CMakeLists.txt (so
# the custom commands live in that directory's scope): every
# shaders/*.comp is compiled by glslc at build time and embedded as a header
# (cmake/spirv.cmake), e.g. shaders/gemm.comp → "delegates/vulkan/shaders/gemm_spv.h".
include(${PROJECT_SOURCE_DIR}/cmake/spirv.cmake)

file(GLOB hetsched_vulkan_shaders CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.comp)
file(GLOB hetsched_vulkan_shader_includes CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.glsl)

# A target of its own, so that other delegates can embed their shaders into
# hetsched_delegates too (hetsched_embed_spirv names its helper target after
# the target it is given, and two calls for one target would collide).
add_custom_target(hetsched_vulkan_shaders)
hetsched_embed_spirv(hetsched_vulkan_shaders ${hetsched_vulkan_shaders})
add_dependencies(hetsched_delegates hetsched_vulkan_shaders)

# glslc resolves #include "common.glsl" itself; hetsched_embed_spirv only
# knows the .comp file, so the shared includes are added as dependencies here.
foreach(shader ${hetsched_vulkan_shaders})
  get_filename_component(stem ${shader} NAME_WE)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/generated/delegates/vulkan/shaders/${stem}_spv.h APPEND
                     DEPENDS ${hetsched_vulkan_shader_includes})
endforeach()
