# SPDX-License-Identifier: MIT
# Finds librdkafka 2.0 (Debian librdkafka-dev), which ships only pkg-config files:
# PkgConfig::rdkafkacpp (the C++ API, rdkafka++, which brings the C library rdkafka; the C API is
# used too, for the admin calls and the mock cluster). Included by babelqueue_add_transport() in
# the build and by babelqueueConfig.cmake for consumers of an installed package (a static
# babelqueue::kafka exports its PRIVATE librdkafka as a link-only dependency).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND AND NOT TARGET PkgConfig::rdkafkacpp)
  pkg_check_modules(rdkafkacpp QUIET IMPORTED_TARGET GLOBAL rdkafka++ rdkafka)
endif()
