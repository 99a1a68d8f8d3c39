# The VGF delegate's generated sources, included from delegates/CMakeLists.txt
# (so the custom commands live in that directory's scope):
#   vgf.fbs           → "delegates/vgf_generated.h" (the container's FlatBuffers tables)
#   shaders/*.comp    → "delegates/vgf/shaders/<stem>_spv.h" (its own shaders, glslc at build time)
include(${PROJECT_SOURCE_DIR}/cmake/spirv.cmake)

hetsched_flatbuffers(hetsched_delegates ${CMAKE_CURRENT_LIST_DIR}/vgf.fbs)

# A target of its own: hetsched_embed_spirv names its helper target after the
# target it is given, and other delegates embed shaders into hetsched_delegates too.
file(GLOB hetsched_vgf_shaders CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/shaders/*.comp)
add_custom_target(hetsched_vgf_shaders)
hetsched_embed_spirv(hetsched_vgf_shaders ${hetsched_vgf_shaders})
add_dependencies(hetsched_delegates hetsched_vgf_shaders)
