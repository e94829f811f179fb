# SPDX-License-Identifier: MIT
# babelqueue_install_component(<target> <component>)
#
# Installs a library of the package: the target into export set babelqueue-<component>-targets,
# the calling directory's include/babelqueue headers, the export file next to
# babelqueueConfig.cmake (which includes it when the component is asked for), and the build-tree
# export, for consumers that point CMAKE_PREFIX_PATH at the build directory.
function(babelqueue_install_component target component)
  set(export_set babelqueue-${component}-targets)
  install(TARGETS ${target} EXPORT ${export_set}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY include/babelqueue DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${export_set} NAMESPACE babelqueue::
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/babelqueue)
  export(EXPORT ${export_set} NAMESPACE babelqueue::
         FILE ${PROJECT_BINARY_DIR}/${export_set}.cmake)
endfunction()
