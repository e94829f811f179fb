# SPDX-License-Identifier: MIT
# cmake -P script behind the package_find_package* tests: installs the build tree BUILD_DIR into
# a fresh PREFIX, then builds and runs the consumer against it with find_package(). With
# SOURCE_DIR, BUILD_DIR is first configured from that source tree with SOURCE_OPTIONS (cmake
# options separated by '|') and built. CONSUMER_REDIS (ON/OFF) says whether the consumer also
# uses the redis component, EXPECTED_TYPE (STATIC_LIBRARY or SHARED_LIBRARY) what the libraries are.
foreach(_var BUILD_DIR PREFIX CONFIG CTEST GENERATOR MAKE_PROGRAM CXX_COMPILER CONSUMER_SRC
             CONSUMER_BIN CONSUMER_REDIS EXPECTED_TYPE)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "find_package_test.cmake: -D${_var}=... is required")
  endif()
endforeach()

# Runs the command after COMMAND and fails the test with its output when it fails.
function(_bq_run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${_rc}):\n${_out}")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BIN}")
if(DEFINED SOURCE_DIR)
  string(REPLACE "|" ";" _options "${SOURCE_OPTIONS}")
  _bq_run("configuring ${SOURCE_DIR} in ${BUILD_DIR}"
    "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BUILD_DIR}" -G "${GENERATOR}"
    "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${CONFIG}" ${_options})
  _bq_run("building ${BUILD_DIR}" "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --config "${CONFIG}")
  message(STATUS "built ${SOURCE_DIR} in ${BUILD_DIR}")
endif()
_bq_run("cmake --install ${BUILD_DIR}"
  "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}")
message(STATUS "installed ${BUILD_DIR} into ${PREFIX}")

# What keeps a component's registration in a consumer's link must reach the consumers.
if(CONSUMER_REDIS)
  file(GLOB_RECURSE _targets "${PREFIX}/babelqueue-redis-targets.cmake")
  file(GLOB_RECURSE _dependencies "${PREFIX}/babelqueue-redis-dependencies.cmake")
  if(NOT _targets OR NOT _dependencies)
    message(FATAL_ERROR "the redis component's targets or dependencies file is not installed")
  endif()
  set(_options "LINKER:--undefined=babelqueue_transport_redis")
  if(EXPECTED_TYPE STREQUAL "SHARED_LIBRARY")
    string(APPEND _options ";LINKER:--no-as-needed")
  endif()
  file(READ "${_targets}" _text)
  string(FIND "${_text}" "INTERFACE_LINK_OPTIONS \"${_options}\"" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "${_targets} lacks INTERFACE_LINK_OPTIONS \"${_options}\"")
  endif()
endif()

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
      "-DBABELQUEUE_EXPECTED_TYPE=${EXPECTED_TYPE}"
    --test-command babelqueue_consumer
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the find_package consumer failed (${_rc})")
endif()
