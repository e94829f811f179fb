# SPDX-License-Identifier: MIT
# Transport components (decision D-6). A transport is one folder, transports/<name>/, whose
# CMakeLists.txt starts with
#
#   babelqueue_add_transport(<name>
#     SCHEMES <scheme>...            URL schemes its factory registers (BABELQUEUE_REGISTER_TRANSPORT)
#     DEBIAN <package>...            what `apt-get install` needs for its driver
#     DEPENDENCIES <file>            finds the driver (also installed for find_package consumers)
#     REQUIRES <target>...           the imported driver targets that file defines when found
#     SOURCES <file>...)
#   if(NOT TARGET babelqueue_<name>)
#     return()
#   endif()
#
# and the root CMakeLists.txt adds it with one line, add_subdirectory(transports/<name>).
# BABELQUEUE_WITH_<NAME> is AUTO (built when the driver is found), ON (required: configure fails
# naming the Debian package) or OFF; it starts as BABELQUEUE_TRANSPORT_DEFAULT (AUTO). The function defines babelqueue_<name> (alias
# babelqueue::<name>, export name <name>), installs it as a package component, keeps its
# registration object alive in static links, and records it for the transport catalog behind
# open_transport's "how to get this scheme" errors.

set(BABELQUEUE_TRANSPORT_DEFAULT AUTO CACHE STRING
    "The first value of every BABELQUEUE_WITH_<NAME>: AUTO, or ON to require every driver (CI)")

function(babelqueue_add_transport name)
  cmake_parse_arguments(T "" "DEPENDENCIES" "SCHEMES;DEBIAN;REQUIRES;SOURCES" ${ARGN})
  string(TOUPPER "${name}" upper)
  set(option BABELQUEUE_WITH_${upper})
  set(${option} ${BABELQUEUE_TRANSPORT_DEFAULT} CACHE STRING "Build the ${name} transport: AUTO (when its driver is found), ON (required) or OFF")
  set_property(CACHE ${option} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${option}}" mode)
  if(NOT mode MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "${option} must be AUTO, ON or OFF, got '${${option}}'")
  endif()
  string(JOIN "," schemes ${T_SCHEMES})
  string(JOIN " " debian ${T_DEBIAN})
  set(built FALSE)
  if(mode MATCHES "^(OFF|FALSE|NO|0)$")
    message(STATUS "babelqueue: ${name} transport: off (${option}=OFF)")
  else()
    if(T_DEPENDENCIES)
      include(${CMAKE_CURRENT_SOURCE_DIR}/${T_DEPENDENCIES})
    endif()
    set(missing "")
    foreach(target IN LISTS T_REQUIRES)
      if(NOT TARGET ${target})
        list(APPEND missing ${target})
      endif()
    endforeach()
    if(missing)
      if(mode STREQUAL "AUTO")
        message(STATUS "babelqueue: ${name} transport: skipped, driver not found (Debian: apt-get install ${debian})")
      else()
        message(FATAL_ERROR "${option}=ON but the ${name} driver was not found (${missing}); install it: apt-get install ${debian}")
      endif()
    else()
      set(built TRUE)
    endif()
  endif()
  if(built)
    set(state built)
  else()
    set(state unbuilt)
  endif()
  set_property(GLOBAL APPEND PROPERTY BABELQUEUE_KNOWN_TRANSPORTS "${name}|${schemes}|-D${option}=ON|${debian}|${state}")
  if(NOT built)
    return()
  endif()

  set(target babelqueue_${name})
  add_library(${target} ${T_SOURCES})
  add_library(babelqueue::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${name}
    OUTPUT_NAME babelqueue-${name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC babelqueue::core PRIVATE ${T_REQUIRES})
  # Linkers drop what nobody references: an archive's object file (no one references the
  # registration, BABELQUEUE_REGISTER_TRANSPORT), so every program linking the component
  # references its symbol; and with --as-needed (Ubuntu's default) a shared library no object file
  # calls into, for which --undefined does not count.
  target_link_options(${target} INTERFACE "LINKER:--undefined=babelqueue_transport_${name}")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "SHARED_LIBRARY")
    target_link_options(${target} INTERFACE "LINKER:--no-as-needed")
  endif()
  babelqueue_target_warnings(${target})
  if(BABELQUEUE_INSTALL)
    babelqueue_install_component(${target} ${name})
    if(T_DEPENDENCIES)
      install(FILES ${T_DEPENDENCIES} DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/babelqueue
              RENAME babelqueue-${name}-dependencies.cmake)
      configure_file(${T_DEPENDENCIES} ${PROJECT_BINARY_DIR}/babelqueue-${name}-dependencies.cmake
                     COPYONLY)
    endif()
  endif()
  set_property(GLOBAL APPEND PROPERTY BABELQUEUE_BUILT_TRANSPORTS ${name})
endfunction()

# Writes the transport catalog (spi::known_transports) into babelqueue_core and prints what was
# built. Call once, after every transport directory.
function(babelqueue_finish_transports)
  get_property(known GLOBAL PROPERTY BABELQUEUE_KNOWN_TRANSPORTS)
  get_property(built GLOBAL PROPERTY BABELQUEUE_BUILT_TRANSPORTS)
  set(entries "")
  foreach(entry IN LISTS known)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 name)
    list(GET fields 1 schemes)
    list(GET fields 2 option)
    list(GET fields 3 debian)
    list(GET fields 4 state)
    string(REPLACE "," "\", \"" scheme_list "${schemes}")
    set(is_built false)
    if(state STREQUAL "built")
      set(is_built true)
    endif()
    string(APPEND entries "      {\"${name}\", {\"${scheme_list}\"}, \"${option}\", \"${debian}\", ${is_built}},\n")
  endforeach()
  set(file ${PROJECT_BINARY_DIR}/generated/transport_catalog.cpp)
  file(CONFIGURE OUTPUT ${file} @ONLY CONTENT [=[
// Generated by babelqueue_finish_transports() (cmake/BabelqueueTransports.cmake).
#include <babelqueue/spi/registry.hpp>

namespace babelqueue::spi {

std::vector<KnownTransport> known_transports() {
  return {
@entries@  };
}

}  // namespace babelqueue::spi
]=])
  target_sources(babelqueue_core PRIVATE ${file})
  if(built)
    string(JOIN ", " built_text ${built})
  else()
    set(built_text "none")
  endif()
  message(STATUS "babelqueue: transports built: memory (always), ${built_text}")
  set(BABELQUEUE_TRANSPORTS ${built} PARENT_SCOPE)
endfunction()
