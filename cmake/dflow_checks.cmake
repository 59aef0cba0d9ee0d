# Checks of the build itself (ctest entries; included from CMakeLists.txt with DFLOW_BUILD_TESTS).

# ---- layering: an upward (or sideways) #include does not compile ----
# Each case is a one-line file compiled with exactly the flags of the layer named (an object
# library that links that layer, so it gets its include roots and no others). The positive case
# must compile, so a failure of a negative case is the missing include path and nothing else;
# each negative case must fail with "<header>: No such file or directory".
# Cases: <layer target>|<header>
set(DFLOW_LAYERING_OK
  "dflow_graph|graph/graph.h" "dflow_graph|framework/op_kernel.h" "dflow_graph|tensor/tensor.h"
  "dflow_graph|base/status.h" "dflow_graph|proto/graph.pb.h" "dflow_graph|dflow/core.h"
  "dflow_rpc|proto/rpc/services.grpc.pb.h" "dflow_train|ops/register_all.h"
  "dflow_train|runtime/direct_session.h")
set(DFLOW_LAYERING_BAD
  "dflow_graph|api/scope_internal.h" "dflow_graph|ops/register_all.h"
  "dflow_runtime|ops/register_all.h" "dflow_ops|runtime/direct_session.h"
  "dflow_ops|train/optimizer.h" "dflow_distributed|rpc/grpc_util.h"
  "dflow_distributed|proto/rpc/services.grpc.pb.h" "dflow_base|tensor/tensor.h"
  "dflow_tensor|framework/op_kernel.h")
set(DFLOW_LAYERING_DIR ${CMAKE_BINARY_DIR}/layering)
set(ok_src)
foreach(case ${DFLOW_LAYERING_OK})
  string(REPLACE "|" ";" parts ${case})
  list(GET parts 0 lib)
  list(GET parts 1 header)
  list(APPEND ok_src_${lib} "#include \"${header}\"\n")
  list(APPEND ok_libs ${lib})
endforeach()
list(REMOVE_DUPLICATES ok_libs)
set(DFLOW_LAYERING_TARGETS)
foreach(lib ${ok_libs})
  string(JOIN "" text ${ok_src_${lib}})
  file(CONFIGURE OUTPUT ${DFLOW_LAYERING_DIR}/ok_${lib}.cc CONTENT "${text}")
  add_library(layering_ok_${lib} OBJECT EXCLUDE_FROM_ALL ${DFLOW_LAYERING_DIR}/ok_${lib}.cc)
  target_link_libraries(layering_ok_${lib} PRIVATE ${lib})
  list(APPEND DFLOW_LAYERING_TARGETS "layering_ok_${lib}|")
endforeach()
set(i 0)
foreach(case ${DFLOW_LAYERING_BAD})
  string(REPLACE "|" ";" parts ${case})
  list(GET parts 0 lib)
  list(GET parts 1 header)
  math(EXPR i "${i} + 1")
  file(CONFIGURE OUTPUT ${DFLOW_LAYERING_DIR}/bad_${i}.cc CONTENT "#include \"${header}\"\n")
  add_library(layering_bad_${i}_${lib} OBJECT EXCLUDE_FROM_ALL ${DFLOW_LAYERING_DIR}/bad_${i}.cc)
  target_link_libraries(layering_bad_${i}_${lib} PRIVATE ${lib})
  list(APPEND DFLOW_LAYERING_TARGETS "layering_bad_${i}_${lib}|${header}")
endforeach()
string(REPLACE ";" "\n" cases "${DFLOW_LAYERING_TARGETS}")
file(CONFIGURE OUTPUT ${DFLOW_LAYERING_DIR}/cases.txt CONTENT "${cases}\n")
add_test(NAME layering COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
         -DCASES=${DFLOW_LAYERING_DIR}/cases.txt -P ${CMAKE_SOURCE_DIR}/cmake/check_layering.cmake)
set_tests_properties(layering PROPERTIES TIMEOUT 300)

# ---- an outside program against an installed copy: find_package(dflow) and pkg-config ----
# find_package runs with the CMake that configured this build and, where there is one, with the
# system's /usr/bin/cmake (Debian 12's 3.25, older than the pip one `make` may use).
set(DFLOW_CONSUMER_CMAKES ${CMAKE_COMMAND})
if(EXISTS /usr/bin/cmake AND NOT CMAKE_COMMAND STREQUAL "/usr/bin/cmake")
  list(APPEND DFLOW_CONSUMER_CMAKES /usr/bin/cmake)
endif()
add_test(NAME install_consumer
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/consumer/run_consumer_test.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_CXX_COMPILER} ${DFLOW_CONSUMER_CMAKES})
set_tests_properties(install_consumer PROPERTIES TIMEOUT 600 PASS_REGULAR_EXPRESSION "PASS: install_consumer")

# ---- format: every tracked C/C++ file is as .clang-format says (clang-format 14, from
# scripts/install-deps.sh); `scripts/format.sh` applies it ----
add_test(NAME format COMMAND ${CMAKE_SOURCE_DIR}/scripts/format.sh --check WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(format PROPERTIES TIMEOUT 120)
