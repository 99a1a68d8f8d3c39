# cmake -DSPV=in.spv -DHEADER=out.h -DNAME=kArray -DSOURCE=label -P spirv_to_header.cmake
# Writes the SPIR-V words of SPV as a constexpr uint32_t array. SPIR-V is a
# stream of little-endian 32-bit words (glslc writes host order, and every
# platform we build on is little-endian), so each group of 4 bytes is
# reversed into one word.
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR remainder "${hex_length} % 8")
if(hex_length EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "failed to embed ${SPV}: size is not a whole number of 32-bit words")
endif()
string(REGEX MATCHALL "........" words "${hex}")
set(body "")
set(column 0)
foreach(word ${words})
  string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," word "${word}")
  string(APPEND body "${word}")
  math(EXPR column "${column} + 1")
  if(column EQUAL 8)
    string(APPEND body "\n    ")
    set(column 0)
  else()
    string(APPEND body " ")
  endif()
endforeach()
file(WRITE ${HEADER}.tmp
"// Generated from ${SOURCE} by cmake/spirv_to_header.cmake. Do not edit.
#pragma once

#include <cstdint>

inline constexpr uint32_t ${NAME}[] = {
    ${body}
};
")
file(COPY_FILE ${HEADER}.tmp ${HEADER} ONLY_IF_DIFFERENT)
file(REMOVE ${HEADER}.tmp)
