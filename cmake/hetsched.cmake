# Shared CMake helpers for hetsched targets.

# HETSCHED_SANITIZE (thread | address,undefined): instruments every target
# defined after this file is included, i.e. all of the project's (scripts/tsan.sh).
if(HETSCHED_SANITIZE)
  if(NOT HETSCHED_SANITIZE MATCHES "^(thread|address,undefined)$")
    message(FATAL_ERROR "HETSCHED_SANITIZE must be empty, thread or address,undefined, not '${HETSCHED_SANITIZE}'")
  endif()
  add_compile_options(-fsanitize=${HETSCHED_SANITIZE} -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${HETSCHED_SANITIZE})
endif()

# HETSCHED_BUILD_FUZZ: every target gets libFuzzer's coverage hooks and
# ASan+UBSan (aborting on the first report), so a fuzzer finds bugs in the
# loaders' own code, not only in its harness (test/fuzz/, scripts/fuzz.sh).
if(HETSCHED_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HETSCHED_BUILD_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  if(HETSCHED_SANITIZE)
    message(FATAL_ERROR "HETSCHED_BUILD_FUZZ brings its own sanitizers; leave HETSCHED_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()

# Warnings for our own code (not third-party or generated headers).
function(hetsched_warnings target)
  # -Wno-restrict: GCC 12 reports false positives for std::string operator+
  # at -O3 (GCC bug 105651), which -Werror would turn into build failures.
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
  if(HETSCHED_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# hetsched_library(NAME SOURCES... [DEPS ...]): a static library of one folder.
function(hetsched_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include
                                            ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  hetsched_warnings(${name})
endfunction()

# hetsched_flatbuffers(TARGET SCHEMA): generates <schema>_generated.h under
# ${PROJECT_BINARY_DIR}/generated/<folder of schema>/ and makes TARGET depend on it.
function(hetsched_flatbuffers target schema)
  get_filename_component(abs ${schema} ABSOLUTE)
  get_filename_component(stem ${schema} NAME_WE)
  file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  set(out_dir ${PROJECT_BINARY_DIR}/generated/${rel_dir})
  set(out ${out_dir}/${stem}_generated.h)
  add_custom_command(OUTPUT ${out}
    COMMAND ${FLATC} --cpp --scoped-enums -o ${out_dir} ${abs}
    DEPENDS ${abs} COMMENT "flatc ${schema}")
  add_custom_target(${target}_${stem}_fbs DEPENDS ${out})
  add_dependencies(${target} ${target}_${stem}_fbs)
endfunction()
