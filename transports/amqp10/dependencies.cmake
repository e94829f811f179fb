# SPDX-License-Identifier: MIT
# Finds Qpid Proton C++ 0.37 (Debian libqpid-proton-cpp12-dev, libqpid-proton11-dev) and defines
# the imported target babelqueue::qpid_proton: its header, libqpid-proton-cpp and the C core it
# runs on (the C disposition API the AMQP 1.0 layer needs for modified{delivery-failed} and
# rejected with an error condition, BROKERS.md "AMQP 1.0"). Debian's libqpid-proton-cpp.pc
# requires .pc files Debian lacks and there is no CMake config, so the files are found one by
# one. The core is linked as the very file libqpid-proton-cpp loads (libqpid-proton-core.so.10,
# no development symlink): the all-in-one libqpid-proton.so next to it would be a second copy of
# every pn_ symbol in the process.
if(NOT TARGET babelqueue::qpid_proton)
  find_path(BABELQUEUE_PROTON_INCLUDE_DIR proton/container.hpp)
  find_library(BABELQUEUE_PROTON_CPP_LIBRARY qpid-proton-cpp)
  find_library(BABELQUEUE_PROTON_CORE_LIBRARY NAMES qpid-proton-core libqpid-proton-core.so.10)
  if(BABELQUEUE_PROTON_INCLUDE_DIR AND BABELQUEUE_PROTON_CPP_LIBRARY
     AND BABELQUEUE_PROTON_CORE_LIBRARY)
    add_library(babelqueue::qpid_proton UNKNOWN IMPORTED)
    set_target_properties(babelqueue::qpid_proton PROPERTIES
      IMPORTED_LOCATION "${BABELQUEUE_PROTON_CPP_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${BABELQUEUE_PROTON_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${BABELQUEUE_PROTON_CORE_LIBRARY}")
  endif()
endif()
