# SPDX-License-Identifier: MIT
# babelqueue_discover_tests(<target> LABELS <label>... [TIMEOUT <seconds>])
#
# gtest_discover_tests() with several labels. CMake 3.25 flattens a list given in its PROPERTIES
# (LABELS "a;b" sets the label a and a property named b), so the labels are set by a file CTest
# reads after the discovered tests (TEST_INCLUDE_FILES keeps the order of registration).
include(GoogleTest)

function(babelqueue_discover_tests target)
  cmake_parse_arguments(T "" "TIMEOUT" "LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  gtest_discover_tests(${target} PROPERTIES TIMEOUT ${T_TIMEOUT} DISCOVERY_TIMEOUT 60)
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${labels_file}"
    "if(${target}_TESTS)\n"
    "  set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
endfunction()

# babelqueue_add_broker_tests(<target> LABELS <label>... [TIMEOUT <seconds>])
#
# One ctest test that runs the whole GoogleTest binary <target>, for integration tests whose
# broker takes seconds to start (RabbitMQ): the binary starts its shared broker once, where
# gtest_discover_tests would run every test in a process (and a broker) of its own.
function(babelqueue_add_broker_tests target)
  cmake_parse_arguments(T "" "TIMEOUT" "LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 900)
  endif()
  add_test(NAME ${target} COMMAND ${target} --gtest_color=no)
  set_tests_properties(${target} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
endfunction()
