# SPDX-License-Identifier: MIT
# Finds what babelqueue::pulsar's protocol codec needs, all Debian packages: protobuf 3.21
# (libprotobuf-dev, protobuf-compiler; CMake's FindProtobuf gives protobuf::libprotobuf-lite and
# protobuf::protoc), and the compression libraries of the message payloads (PLS, issue 13):
# PkgConfig::pulsar_lz4 (liblz4-dev), PkgConfig::pulsar_zstd (libzstd-dev),
# PkgConfig::pulsar_snappy (libsnappy-dev) and ZLIB::ZLIB (zlib1g-dev); the client on header-only
# Boost.Asio (libboost1.81-dev: Boost::headers), its TLS on OpenSSL 3 (libssl-dev: OpenSSL::SSL)
# and Threads::Threads.
find_package(Protobuf QUIET)
find_package(ZLIB QUIET)
find_package(Boost 1.74 QUIET CONFIG COMPONENTS headers)
find_package(Threads QUIET)
if(NOT TARGET OpenSSL::SSL)
  find_package(OpenSSL QUIET)
endif()
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  if(NOT TARGET PkgConfig::pulsar_lz4)
    pkg_check_modules(pulsar_lz4 QUIET IMPORTED_TARGET GLOBAL liblz4)
  endif()
  if(NOT TARGET PkgConfig::pulsar_zstd)
    pkg_check_modules(pulsar_zstd QUIET IMPORTED_TARGET GLOBAL libzstd)
  endif()
  if(NOT TARGET PkgConfig::pulsar_snappy)
    pkg_check_modules(pulsar_snappy QUIET IMPORTED_TARGET GLOBAL snappy)
  endif()
endif()
