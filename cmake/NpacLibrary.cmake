# npac_library(NAME folder DEPS ...)
# Builds the static library npac_<folder> from every *.cc in the folder. New files are
# picked up without editing CMake (CONFIGURE_DEPENDS), so each layer's owner only adds
# sources. The folder's parent is the include root: #include "cmip/ber.h".
function(npac_library folder)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  set(target npac_${folder})
  if(srcs)
    add_library(${target} STATIC ${srcs})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
