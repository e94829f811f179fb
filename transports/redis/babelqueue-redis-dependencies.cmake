# SPDX-License-Identifier: MIT
# A static babelqueue::redis exports its PRIVATE hiredis as a link-only dependency.
find_package(PkgConfig REQUIRED)
if(NOT TARGET PkgConfig::hiredis)
  pkg_check_modules(hiredis REQUIRED IMPORTED_TARGET GLOBAL hiredis)
endif()
