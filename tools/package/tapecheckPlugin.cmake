# tapecheck_add_plugin(<name> SOURCES <file>...)
#
# Builds a kernel plugin for `tapecheck run|certify --kernels lib<name>.so`: a MODULE library
# named lib<name>.so from C, C++ or CUDA sources, built against the kernel ABI header
# (<tapecheck/kernels_v1.h>, target tapecheck::kernels_abi). Everything is compiled with hidden
# visibility, so the one symbol to export, tapecheck_kernels_v1_get, is declared with
# __attribute__((visibility("default"))) (docs/writing-a-plugin.md). CUDA sources use the shared
# CUDA runtime, the one the tapecheck process already holds; the project enables the CUDA
# language and picks the architectures (CMAKE_CUDA_ARCHITECTURES). Symbols left undefined fail
# the link instead of the plugin's load. The target is an ordinary one: add include
# directories, definitions and libraries to it as usual.
#
# This file is installed with the tapecheck package (find_package(tapecheck)) and included by
# tapecheck's own build for its in-tree plugins.
function(tapecheck_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tapecheck_add_plugin(${name}): unexpected arguments "
                        "'${arg_UNPARSED_ARGUMENTS}' (usage: tapecheck_add_plugin(<name> SOURCES <file>...))")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "tapecheck_add_plugin(${name}): SOURCES names no file")
  endif()
  add_library(${name} MODULE ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE tapecheck::kernels_abi)
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    CUDA_RUNTIME_LIBRARY Shared)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${name} PRIVATE "LINKER:--no-undefined")
  endif()
endfunction()
