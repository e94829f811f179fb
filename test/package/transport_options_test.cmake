# SPDX-License-Identifier: MIT
# cmake -P script behind the package_transport_options test (issue 8 item 11): configures the
# source tree SOURCE_DIR in scratch directories under WORK_DIR with each BABELQUEUE_WITH_REDIS
# mode, the Redis driver found or hidden from pkg-config, and checks what configure says and does.
# HAVE_REDIS (ON/OFF) says whether this machine has the driver.
foreach(_var SOURCE_DIR WORK_DIR GENERATOR MAKE_PROGRAM CXX_COMPILER HAVE_REDIS)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "transport_options_test.cmake: -D${_var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/no-pkgconfig")

# _bq_configure(<case> PASS|FAIL [HIDE_DRIVER] [EXPECT <regex>...] [OPTIONS <option>...]):
# configures WORK_DIR/<case>, checks the outcome and that the output matches every regex.
function(_bq_configure name outcome)
  cmake_parse_arguments(C "HIDE_DRIVER" "" "EXPECT;OPTIONS" ${ARGN})
  set(command "${CMAKE_COMMAND}")
  if(C_HIDE_DRIVER)
    # pkg-config searches only an empty directory, so hiredis is not found.
    set(command "${CMAKE_COMMAND}" -E env "PKG_CONFIG_LIBDIR=${WORK_DIR}/no-pkgconfig"
                "PKG_CONFIG_PATH=" "${CMAKE_COMMAND}")
  endif()
  execute_process(
    COMMAND ${command} -S "${SOURCE_DIR}" -B "${WORK_DIR}/${name}" -G "${GENERATOR}"
            "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
            -DBABELQUEUE_BUILD_BENCHMARKS=OFF ${C_OPTIONS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if((outcome STREQUAL "PASS") AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: configure failed (${rc}):\n${out}")
  elseif((outcome STREQUAL "FAIL") AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: configure succeeded, expected it to fail:\n${out}")
  endif()
  # CMake wraps long messages: match on the text with its line breaks and indents folded.
  string(REGEX REPLACE "[ \t\r\n]+" " " folded "${out}")
  foreach(regex IN LISTS C_EXPECT)
    if(NOT folded MATCHES "${regex}")
      message(FATAL_ERROR "${name}: configure output does not match \"${regex}\":\n${out}")
    endif()
  endforeach()
  message(STATUS "${name}: ok")
endfunction()

# _bq_expect_redis(<case> <built>): the catalog entry and the test directory follow the mode.
function(_bq_expect_redis name built)
  file(READ "${WORK_DIR}/${name}/generated/transport_catalog.cpp" catalog)
  string(FIND "${catalog}" "{\"redis\", {\"redis\", \"rediss\", \"unix\"}, \"-DBABELQUEUE_WITH_REDIS=ON\", \"libhiredis-dev\", ${built}, false}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: the catalog lacks redis with built=${built}:\n${catalog}")
  endif()
  if(EXISTS "${WORK_DIR}/${name}/transports/redis/test")
    set(has_tests true)
  else()
    set(has_tests false)
  endif()
  if(NOT has_tests STREQUAL built)
    message(FATAL_ERROR "${name}: transports/redis/test added is ${has_tests}, expected ${built}")
  endif()
endfunction()

# The other transports are off, so each case sees the Redis one alone.
set(_others_off -DBABELQUEUE_WITH_AMQP=OFF -DBABELQUEUE_WITH_KAFKA=OFF -DBABELQUEUE_WITH_SQS=OFF
                -DBABELQUEUE_WITH_ARTEMIS=OFF -DBABELQUEUE_WITH_PULSAR=OFF
                -DBABELQUEUE_WITH_AZURESERVICEBUS=OFF)
set(_tests_on -DBABELQUEUE_BUILD_TESTS=ON -DBABELQUEUE_BUILD_TOOLS=ON ${_others_off})
set(_tests_off -DBABELQUEUE_BUILD_TESTS=OFF -DBABELQUEUE_BUILD_TOOLS=OFF ${_others_off})

_bq_configure(on_missing FAIL HIDE_DRIVER OPTIONS ${_tests_off} -DBABELQUEUE_WITH_REDIS=ON
  EXPECT "BABELQUEUE_WITH_REDIS=ON but the redis driver was not found"
         "install it: apt-get install libhiredis-dev")
_bq_configure(default_on_missing FAIL HIDE_DRIVER
  OPTIONS ${_tests_off} -DBABELQUEUE_TRANSPORT_DEFAULT=ON
  EXPECT "BABELQUEUE_WITH_REDIS=ON but the redis driver was not found")
_bq_configure(auto_missing PASS HIDE_DRIVER OPTIONS ${_tests_on}
  EXPECT "babelqueue: redis transport: skipped, driver not found \\(Debian: apt-get install libhiredis-dev\\)"
         "babelqueue: transports built: memory \\(always\\), none")
_bq_expect_redis(auto_missing false)
_bq_configure(off PASS OPTIONS ${_tests_on} -DBABELQUEUE_WITH_REDIS=OFF
  EXPECT "babelqueue: redis transport: off \\(BABELQUEUE_WITH_REDIS=OFF\\)"
         "babelqueue: transports built: memory \\(always\\), none")
_bq_expect_redis(off false)
if(HAVE_REDIS)
  _bq_configure(on_found PASS OPTIONS ${_tests_on} -DBABELQUEUE_WITH_REDIS=ON
    EXPECT "babelqueue: transports built: memory \\(always\\), redis")
  _bq_expect_redis(on_found true)
endif()
_bq_configure(bad_value FAIL OPTIONS ${_tests_off} -DBABELQUEUE_WITH_REDIS=maybe
  EXPECT "BABELQUEUE_WITH_REDIS must be AUTO, ON or OFF, got 'maybe'")
