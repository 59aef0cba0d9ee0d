# The installable library dflow::dflow and what `cmake --install` puts under a prefix:
#   include/dflow/*.h                the public API (include/dflow)
#   include/dflow/gen/proto/*.pb.h   the generated message classes the public headers use
#   lib/libdflow.a (.so with DFLOW_SHARED=ON)
#   lib/cmake/dflow/                 dflowConfig.cmake, dflowConfigVersion.cmake, dflowTargets*.cmake
#   lib/pkgconfig/dflow.pc
#   bin/dflow                        the dflow command
# The library is one archive (or shared object) of the object files the layers and the generated
# protos were compiled into: nothing is compiled twice. Ops, gradients and session factories are
# registered by explicit calls (InitDflow, RegisterAllOps), not by static initialisers, so a
# program links the plain archive without --whole-archive.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

option(DFLOW_SHARED "Build the installed library dflow::dflow as a shared library" ${BUILD_SHARED_LIBS})
if(DFLOW_SHARED)
  set(DFLOW_LIB_TYPE SHARED)
else()
  set(DFLOW_LIB_TYPE STATIC)
endif()

set(DFLOW_LIB_OBJECTS)
foreach(t dflow_proto dflow_rpc_proto ${DFLOW_LAYER_TARGETS})
  list(APPEND DFLOW_LIB_OBJECTS $<TARGET_OBJECTS:${t}>)
endforeach()
add_library(dflow_lib ${DFLOW_LIB_TYPE} ${DFLOW_LIB_OBJECTS})
add_library(dflow::dflow ALIAS dflow_lib)
set_target_properties(dflow_lib PROPERTIES
  OUTPUT_NAME dflow EXPORT_NAME dflow LINKER_LANGUAGE CXX
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_compile_features(dflow_lib INTERFACE cxx_std_20)
# Where the generated headers go, relative to the include directory.
set(DFLOW_INSTALL_GENDIR ${CMAKE_INSTALL_INCLUDEDIR}/dflow/gen)
target_include_directories(dflow_lib INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/gen>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}> $<INSTALL_INTERFACE:${DFLOW_INSTALL_GENDIR}>)
# Public: what the public headers include (absl's Status and containers, protobuf's messages).
# Private: what only the library's own code uses; a static library's users still link them
# (CMake exports them as $<LINK_ONLY:...>), a shared library's do not.
target_link_libraries(dflow_lib
  PUBLIC absl::status absl::statusor absl::strings absl::str_format absl::inlined_vector absl::span
         protobuf::libprotobuf Threads::Threads
  PRIVATE gRPC::grpc++ OpenSSL::Crypto DNNL::dnnl OpenMP::OpenMP_CXX ZLIB::ZLIB)

option(DFLOW_INSTALL "Install the library, headers, package files and the dflow command" ON)
if(DFLOW_INSTALL AND NOT SKBUILD)  # the Python wheel installs only its own files (python/)
  set(DFLOW_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/dflow)
  install(TARGETS dflow_lib EXPORT dflowTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS dflow RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/dflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
  install(DIRECTORY ${CMAKE_BINARY_DIR}/gen/proto DESTINATION ${DFLOW_INSTALL_GENDIR}
          FILES_MATCHING PATTERN "*.pb.h" PATTERN "rpc" EXCLUDE)
  install(EXPORT dflowTargets NAMESPACE dflow:: DESTINATION ${DFLOW_CMAKE_DIR})
  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dflowConfig.cmake.in
    ${CMAKE_BINARY_DIR}/cmake/dflowConfig.cmake INSTALL_DESTINATION ${DFLOW_CMAKE_DIR})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/dflowConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/cmake/dflowConfig.cmake ${CMAKE_BINARY_DIR}/cmake/dflowConfigVersion.cmake
          DESTINATION ${DFLOW_CMAKE_DIR})

  # dflow.pc finds its prefix from where it lies (${pcfiledir}), so any --prefix works.
  file(RELATIVE_PATH DFLOW_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
  string(REGEX REPLACE "/$" "" DFLOW_PC_TO_PREFIX "${DFLOW_PC_TO_PREFIX}")
  if(DFLOW_SHARED)
    set(DFLOW_PC_REQUIRES_PRIVATE "")
    set(DFLOW_PC_LIBS_PRIVATE "")
  else()
    set(DFLOW_PC_REQUIRES_PRIVATE "grpc++ libcrypto zlib")
    set(DFLOW_PC_LIBS_PRIVATE "-ldnnl -fopenmp -pthread")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/dflow.pc.in ${CMAKE_BINARY_DIR}/cmake/dflow.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/cmake/dflow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
