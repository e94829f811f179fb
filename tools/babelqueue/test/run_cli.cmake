# SPDX-License-Identifier: MIT
# Runs the babelqueue CLI once and checks it (see babelqueue_cli_test in ../CMakeLists.txt).
#   cmake -DCLI=<exe> -DARGS=<arg|arg|...> -DEXPECT_EXIT=<n> [-DEXPECT_STDOUT=<regex>]
#         [-DEXPECT_STDERR=<regex>] [-DINPUT_FILE=<stdin file>] -P run_cli.cmake
string(REPLACE "|" ";" args "${ARGS}")
set(stdin_args)
if(INPUT_FILE)
  set(stdin_args INPUT_FILE "${INPUT_FILE}")
endif()
execute_process(COMMAND "${CLI}" ${args} ${stdin_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)

set(problems "")
if(NOT "${rc}" STREQUAL "${EXPECT_EXIT}")
  string(APPEND problems "exit status ${rc}, expected ${EXPECT_EXIT}\n")
endif()
if(NOT "${EXPECT_STDOUT}" STREQUAL "" AND NOT "${out}" MATCHES "${EXPECT_STDOUT}")
  string(APPEND problems "stdout does not match: ${EXPECT_STDOUT}\n")
endif()
if(NOT "${EXPECT_STDERR}" STREQUAL "" AND NOT "${err}" MATCHES "${EXPECT_STDERR}")
  string(APPEND problems "stderr does not match: ${EXPECT_STDERR}\n")
endif()
if(problems)
  message(FATAL_ERROR "babelqueue ${args}\n${problems}--- stdout ---\n${out}--- stderr ---\n${err}")
endif()
