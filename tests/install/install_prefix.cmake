# cmake -DBUILD_DIR=<outer build> -DPREFIX=<prefix> [-DCONFIG=<config>] -P install_prefix.cmake
# Installs the outer build into an emptied prefix, so that headers or files removed from the install
# rules do not linger there from an earlier run and hide the omission.
cmake_minimum_required(VERSION 3.25) # the policies of the project, in script mode
foreach(required IN ITEMS BUILD_DIR PREFIX)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "install_prefix.cmake: ${required} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE "${PREFIX}")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${status}); is the build complete?")
endif()
foreach(package IN ITEMS constrint flashrnn)
  file(GLOB_RECURSE config "${PREFIX}/*/${package}Config.cmake")
  if(NOT config)
    message(FATAL_ERROR "no ${package}Config.cmake under ${PREFIX} after cmake --install")
  endif()
endforeach()
message(STATUS "installed into ${PREFIX}")
