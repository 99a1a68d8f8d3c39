# SPIR-V embedding: compile GLSL compute shaders with glslc at build time and
# turn each .spv into a C++ header, so shaders ship inside the binary.
#
# hetsched_embed_spirv(TARGET SHADER...)
#   For each SHADER (e.g. delegates/vulkan/shaders/add.comp) writes
#   ${PROJECT_BINARY_DIR}/generated/<folder of SHADER relative to the source
#   root>/<stem>_spv.h, holding
#     inline constexpr uint32_t k<Stem>Spv[] = {...};   // add.comp → kAddSpv
#   and makes TARGET depend on it. Include it as "<folder>/<stem>_spv.h";
#   targets made with hetsched_library already have the generated folder on
#   their include path. Pass the array to the pipeline helpers as a
#   std::span<const uint32_t>.

find_program(GLSLC glslc REQUIRED)

function(hetsched_embed_spirv target)
  _hetsched_embed_spirv(${target} "" "" ${ARGN})
endfunction()

# hetsched_embed_spirv_half(TARGET SHADER...)
#   The same shaders compiled a second time with HS_HALF_IO defined
#   (shared_gpu/shaders/half_io.glsl: per-binding f16 storage, which needs
#   storageBuffer16BitAccess): <stem>_half_spv.h holding k<Stem>HalfSpv.
function(hetsched_embed_spirv_half target)
  _hetsched_embed_spirv(${target} "_half" "-DHS_HALF_IO=1" ${ARGN})
endfunction()

# hetsched_spirv_include_depends(SUFFIX INCLUDES file... SHADERS shader...)
#   Makes each SHADER's header (<stem>SUFFIX_spv.h, as the functions above
#   name it) depend on every INCLUDES file too: glslc resolves #include
#   itself, and a header made before its depfile existed would not rebuild
#   when a shared .glsl changes. Call it from the directory scope the
#   headers were declared in.
function(hetsched_spirv_include_depends suffix)
  cmake_parse_arguments(arg "" "" "INCLUDES;SHADERS" ${ARGN})
  foreach(shader ${arg_SHADERS})
    get_filename_component(abs ${shader} ABSOLUTE)
    get_filename_component(stem ${abs} NAME_WE)
    get_filename_component(dir ${abs} DIRECTORY)
    file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${dir})
    add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/generated/${rel_dir}/${stem}${suffix}_spv.h APPEND
                       DEPENDS ${arg_INCLUDES})
  endforeach()
endfunction()

function(_hetsched_embed_spirv target suffix define)
  # Spelled from the project root (not this file's directory variable), so
  # the function also works when called from another directory's scope.
  set(to_header ${PROJECT_SOURCE_DIR}/cmake/spirv_to_header.cmake)
  set(headers)
  foreach(shader ${ARGN})
    get_filename_component(abs ${shader} ABSOLUTE)
    get_filename_component(stem ${abs} NAME_WE)
    string(APPEND stem "${suffix}")
    get_filename_component(dir ${abs} DIRECTORY)
    file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${dir})
    set(out_dir ${PROJECT_BINARY_DIR}/generated/${rel_dir})
    set(spv ${out_dir}/${stem}.spv)
    set(header ${out_dir}/${stem}_spv.h)
    # k + CamelCase(stem) + Spv: add_one → kAddOneSpv.
    string(REPLACE "_" ";" parts ${stem})
    set(array_name "k")
    foreach(part ${parts})
      string(SUBSTRING ${part} 0 1 first)
      string(TOUPPER ${first} first)
      string(SUBSTRING ${part} 1 -1 rest)
      string(APPEND array_name ${first}${rest})
    endforeach()
    string(APPEND array_name "Spv")
    add_custom_command(
      OUTPUT ${header}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      # The depfile names the GLSL files a shader #includes (common.glsl,
      # shared_gpu/shaders/erf.glsl), so editing one rebuilds its includers.
      COMMAND ${GLSLC} --target-env=vulkan1.2 -O ${define} -MD -MF ${spv}.d -MT ${header} -o ${spv} ${abs}
      COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DHEADER=${header} -DNAME=${array_name}
              -DSOURCE=${rel_dir}/${stem} -P ${to_header}
      DEPENDS ${abs} ${to_header}
      DEPFILE ${spv}.d
      COMMENT "glslc ${rel_dir}/${stem}"
      VERBATIM)
    list(APPEND headers ${header})
  endforeach()
  string(MAKE_C_IDENTIFIER "${target}_spirv${suffix}" spirv_target)
  add_custom_target(${spirv_target} DEPENDS ${headers})
  add_dependencies(${target} ${spirv_target})
endfunction()
