# The public headers are self-contained (docs/ARCHITECTURE.md, "Public API"): each one compiles on
# its own in a translation unit of its own whose include path is what an installed copy offers
# (include/, the generated protos, absl and protobuf) and never src/, so a public header that
# reaches into src/ breaks the build. One more translation unit includes them all and fails if
# any internal macro (LOG, CHECK, RETURN_IF_ERROR, ...) got through. Part of `all`.
file(GLOB DFLOW_PUBLIC_HEADERS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/dflow/*.h)
set(DFLOW_HEADER_CHECK_DIR ${CMAKE_BINARY_DIR}/public_headers)
set(header_check_srcs)
set(all_headers "")
foreach(h ${DFLOW_PUBLIC_HEADERS})
  get_filename_component(n ${h} NAME_WE)
  file(CONFIGURE OUTPUT ${DFLOW_HEADER_CHECK_DIR}/${n}.cc CONTENT "#include \"dflow/${n}.h\"\n")
  list(APPEND header_check_srcs ${DFLOW_HEADER_CHECK_DIR}/${n}.cc)
  string(APPEND all_headers "#include \"dflow/${n}.h\"\n")
endforeach()
set(leaks "")
foreach(m LOG CHECK CHECK_OK DCHECK RETURN_IF_ERROR ASSIGN_OR_RETURN ASSIGN_OR_RETURN_IMPL)
  string(APPEND leaks "#ifdef ${m}\n#error \"the public headers define the internal macro ${m}\"\n#endif\n")
endforeach()
file(CONFIGURE OUTPUT ${DFLOW_HEADER_CHECK_DIR}/all_public_headers.cc CONTENT "${all_headers}${leaks}")
list(APPEND header_check_srcs ${DFLOW_HEADER_CHECK_DIR}/all_public_headers.cc)
add_library(dflow_public_headers OBJECT ${header_check_srcs})
target_include_directories(dflow_public_headers PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(dflow_public_headers PRIVATE dflow_proto absl::status absl::statusor absl::strings
                      absl::str_format absl::inlined_vector absl::span)

# The same rule as a test: no public header names an internal header or defines an internal
# macro.
if(DFLOW_BUILD_TESTS)
  add_test(NAME public_headers_no_internal_includes
           COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check_public_headers.sh ${CMAKE_SOURCE_DIR}/include)
  set_tests_properties(public_headers_no_internal_includes PROPERTIES PASS_REGULAR_EXPRESSION "PASS:")
endif()
