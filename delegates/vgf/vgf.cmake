# The VGF delegate (hetsched_vgf_delegate), included from
# delegates/CMakeLists.txt (so the custom commands live in that directory's
# scope), and its generated sources:
#   vgf.fbs           → "delegates/vgf_generated.h" (the container's FlatBuffers tables)
#   shaders/*.comp    → "delegates/vgf/shaders/<stem>_spv.h" (its own shaders, glslc at build time)
# Tools use only vgf_api.h (and the registry), never the container's internals.
include(${PROJECT_SOURCE_DIR}/cmake/spirv.cmake)

file(GLOB hetsched_vgf_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
hetsched_library(hetsched_vgf_delegate SOURCES ${hetsched_vgf_sources}
                 DEPS hetsched_delegate_contract hetsched_graph hetsched_memory hetsched_shared_gpu
                      flatbuffers::flatbuffers spdlog::spdlog)
hetsched_flatbuffers(hetsched_vgf_delegate ${CMAKE_CURRENT_LIST_DIR}/vgf.fbs)

file(GLOB hetsched_vgf_shaders CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.comp)
hetsched_embed_spirv(hetsched_vgf_delegate ${hetsched_vgf_shaders})
# The runtime's built-in kernels again with 16-bit storage between kernels
# (shared_gpu/shaders/half_io.glsl): <stem>_half_spv.h. Not the casts (their
# element types are their job), nor the shaders a file's compute segments
# carry (gelu, hardswish, layer_norm, softmax: the file's SPIR-V runs as is).
set(hetsched_vgf_half_shaders)
foreach(stem binary copy matmul pad pool2d reduce resize select transpose_conv2d unary)
  list(APPEND hetsched_vgf_half_shaders ${CMAKE_CURRENT_LIST_DIR}/shaders/${stem}.comp)
endforeach()
hetsched_embed_spirv_half(hetsched_vgf_delegate ${hetsched_vgf_half_shaders})

# glslc resolves the #includes itself; hetsched_embed_spirv only knows the
# .comp file, so the shared includes are added as dependencies here.
file(GLOB hetsched_vgf_shader_includes CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.glsl
     ${PROJECT_SOURCE_DIR}/shared_gpu/shaders/*.glsl)
hetsched_spirv_include_depends("" INCLUDES ${hetsched_vgf_shader_includes} SHADERS ${hetsched_vgf_shaders})
hetsched_spirv_include_depends(_half INCLUDES ${hetsched_vgf_shader_includes} SHADERS ${hetsched_vgf_half_shaders})
