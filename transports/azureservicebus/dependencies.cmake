# SPDX-License-Identifier: MIT
# Finds the Azure Service Bus transport's drivers: Qpid Proton C++ through the AMQP 1.0 layer's
# finder (babelqueue::qpid_proton; installed beside this file as
# babelqueue-amqp10-dependencies.cmake) and OpenSSL 3's libcrypto (Debian libssl-dev:
# OpenSSL::Crypto, SAS token signing). Included by babelqueue_add_transport() in the build and by
# babelqueueConfig.cmake for consumers of an installed package.
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/babelqueue-amqp10-dependencies.cmake)
  include(${CMAKE_CURRENT_LIST_DIR}/babelqueue-amqp10-dependencies.cmake)
else()
  include(${CMAKE_CURRENT_LIST_DIR}/../amqp10/dependencies.cmake)
endif()
if(NOT TARGET OpenSSL::Crypto)
  find_package(OpenSSL QUIET)
endif()
