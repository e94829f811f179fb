# SPDX-License-Identifier: MIT
# Finds rabbitmq-c 0.11 (Debian librabbitmq-dev), which exports the CMake target
# rabbitmq::rabbitmq. Included by babelqueue_add_transport() in the build and by
# babelqueueConfig.cmake for consumers of an installed package (a static babelqueue::amqp exports
# its PRIVATE rabbitmq-c as a link-only dependency).
if(NOT TARGET rabbitmq::rabbitmq)
  find_package(rabbitmq-c CONFIG QUIET)
endif()
