# SPDX-License-Identifier: MIT
# cmake -P script behind the package_find_package test: installs the build tree BUILD_DIR into a
# fresh PREFIX, then builds and runs the consumer against it with find_package(). CONSUMER_REDIS
# (ON/OFF) says whether the consumer also uses the redis component.
foreach(_var BUILD_DIR PREFIX CONFIG CTEST GENERATOR MAKE_PROGRAM CXX_COMPILER CONSUMER_SRC
             CONSUMER_BIN)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "find_package_test.cmake: -D${_var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BIN}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} failed (${_rc}):\n${_out}")
endif()
message(STATUS "installed ${BUILD_DIR} into ${PREFIX}")

execute_process(
  COMMAND "${CTEST}" --build-and-test "${CONSUMER_SRC}" "${CONSUMER_BIN}"
    --build-generator "${GENERATOR}"
    --build-makeprogram "${MAKE_PROGRAM}"
    --build-config "${CONFIG}"
    --build-options
      "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
      "-DCMAKE_BUILD_TYPE=${CONFIG}"
      "-DCMAKE_PREFIX_PATH=${PREFIX}"
      "-DBABELQUEUE_CONSUMER_MODE=find_package"
      "-DBABELQUEUE_EXPECTED_PREFIX=${PREFIX}"
      "-DBABELQUEUE_CONSUMER_REDIS=${CONSUMER_REDIS}"
    --test-command babelqueue_consumer
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the find_package consumer failed (${_rc})")
endif()
