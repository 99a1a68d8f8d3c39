# libhetsched.a: the public API for hosts that link statically. Every object
# of the internal libraries and of api/ is linked into one relocatable object
# (ld -r), whose volk symbols (the vk* function pointers and volk* loaders)
# are then made local, so a host that links libvulkan (or has its own volk)
# calls its own vkCreateInstance, not our pointer of that name; the object
# goes into the archive. Unlike the shared library, the dependencies are the
# host's to link: the CMake package's hetsched::hetsched_static names them
# (hetschedConfig.cmake.in), and the host finds them as we do.
set(hetsched_static_parts hetsched_graph hetsched_memory hetsched_sync hetsched_shared_gpu
    hetsched_delegate_contract hetsched_cpu_delegate hetsched_vulkan_delegate hetsched_vgf_delegate
    hetsched_delegates hetsched_partitioner hetsched_profile hetsched_scheduler)
add_library(hetsched_api_objects OBJECT model.cc vulkan.cc)
target_link_libraries(hetsched_api_objects PRIVATE hetsched_all)
set_target_properties(hetsched_api_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
hetsched_warnings(hetsched_api_objects)

set(static_objects $<TARGET_OBJECTS:hetsched_api_objects>)
foreach(part ${hetsched_static_parts})
  list(APPEND static_objects $<TARGET_OBJECTS:${part}>)
endforeach()
set(static_merged ${CMAKE_CURRENT_BINARY_DIR}/hetsched_static.o)
set(static_archive ${CMAKE_CURRENT_BINARY_DIR}/libhetsched.a)
add_custom_command(OUTPUT ${static_archive}
  COMMAND ${CMAKE_LINKER} -r -o ${static_merged} ${static_objects}
  COMMAND ${CMAKE_OBJCOPY} --wildcard --localize-symbol=vk* --localize-symbol=volk* ${static_merged}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${static_archive}
  COMMAND ${CMAKE_AR} qc ${static_archive} ${static_merged}
  COMMAND ${CMAKE_RANLIB} ${static_archive}
  DEPENDS ${static_objects} ${hetsched_static_parts}
  COMMAND_EXPAND_LISTS VERBATIM
  COMMENT "Writing libhetsched.a")
add_custom_target(hetsched_static ALL DEPENDS ${static_archive})
install(FILES ${static_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR})

# What hetsched::hetsched_static links besides the archive, for the package
# config: the imported targets of the packages it finds, and XNNPACK
# by path (it comes without a CMake package; the archive holds its own
# pthreadpool API, delegates/cpu/xnnpack/threadpool.h).
set(HETSCHED_STATIC_DEPS "TBB::tbb;spdlog::spdlog;yaml-cpp;flatbuffers::flatbuffers;onnx_proto;protobuf::libprotobuf;${XNNPACK_LIBRARY};Threads::Threads;${CMAKE_DL_LIBS}")
