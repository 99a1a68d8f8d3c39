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
