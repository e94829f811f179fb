# SPDX-License-Identifier: MIT
# babelqueue_target_warnings(<target>): the project's warning set, applied per target (never
# through CMAKE_CXX_FLAGS, so consumers that add_subdirectory() us are not affected).
function(babelqueue_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wsign-conversion -Wnon-virtual-dtor -Woverloaded-virtual)
  if(BABELQUEUE_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(BABELQUEUE_SANITIZE)
  add_compile_options(-fsanitize=${BABELQUEUE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${BABELQUEUE_SANITIZE})
endif()

# -DBABELQUEUE_BUILD_FUZZERS=ON: every target gets libFuzzer's coverage instrumentation and
# ASan+UBSan, so the fuzzers see (and check) the library's code, not just their own. The fuzz
# targets add -fsanitize=fuzzer themselves, which also links libFuzzer's main().
if(BABELQUEUE_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "BABELQUEUE_BUILD_FUZZERS needs clang for libFuzzer: "
                        "configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
