# SPDX-License-Identifier: MIT
# Finds hiredis (PkgConfig::hiredis). hiredis 0.14 ships only a pkg-config file; 1.x also exports
# CMake targets; pkg-config works for both. Included by babelqueue_add_transport() in the build
# and by babelqueueConfig.cmake for consumers of an installed package (a static babelqueue::redis
# exports its PRIVATE hiredis as a link-only dependency).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND AND NOT TARGET PkgConfig::hiredis)
  pkg_check_modules(hiredis QUIET IMPORTED_TARGET GLOBAL hiredis)
endif()
