# Configures, builds and runs the consumer project (consumer/) against an installed prefix, as a user
# of the packages would: find_package through CMAKE_PREFIX_PATH only.
#
# cmake -DWORK_DIR=<scratch dir, emptied> -DPREFIX=<install prefix> -DGENERATOR=<generator>
#       -DCXX_COMPILER=<path> [-DCXX_LAUNCHER=<ccache>] [-DMAKE_PROGRAM=<ninja>] [-DCUDA_TOOLKIT=<root>]
#       [-DBUILD_TYPE=<type>] [-DCONFIG=<config>] [-DWARNINGS_AS_ERRORS=ON]
#       [-DEXAMPLES_FROM=<source root> -DEXAMPLE_PAGES=<glob>|<glob>...] -P build_consumer.cmake
#
# Without EXAMPLES_FROM it builds and runs the program `consumer` (consumer/main.cpp). With it, it
# extracts the marked examples of the pages (extract_examples.cmake, relative globs joined by '|'),
# builds every one and runs those not marked "(gpu)".
cmake_minimum_required(VERSION 3.25) # the policies of the project, in script mode
foreach(required IN ITEMS WORK_DIR PREFIX GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "build_consumer.cmake: ${required} is not set")
  endif()
endforeach()
set(consumer_source "${CMAKE_CURRENT_LIST_DIR}/consumer")
set(build_dir "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

set(configure_args -S "${consumer_source}" -B "${build_dir}" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
# CUDA_TOOLKIT: the toolkit the library was built with, for flashrnn's find_dependency(CUDAToolkit)
# (the consumer is a C++ project; CMAKE_CUDA_COMPILER would only count if it enabled CUDA).
foreach(setting IN ITEMS CMAKE_CXX_COMPILER_LAUNCHER:CXX_LAUNCHER CMAKE_MAKE_PROGRAM:MAKE_PROGRAM
                         CUDAToolkit_ROOT:CUDA_TOOLKIT CMAKE_BUILD_TYPE:BUILD_TYPE)
  string(REPLACE ":" ";" setting "${setting}")
  list(GET setting 0 cmake_variable)
  list(GET setting 1 argument)
  if(${argument})
    list(APPEND configure_args "-D${cmake_variable}=${${argument}}")
  endif()
endforeach()
if(WARNINGS_AS_ERRORS)
  list(APPEND configure_args -DCONSUMER_WARNINGS_AS_ERRORS=ON)
endif()

set(target consumer)
set(programs consumer)
if(EXAMPLES_FROM)
  include("${CMAKE_CURRENT_LIST_DIR}/extract_examples.cmake")
  string(REPLACE "|" ";" globs "${EXAMPLE_PAGES}")
  set(pages "")
  foreach(glob IN LISTS globs)
    file(GLOB matched "${EXAMPLES_FROM}/${glob}")
    list(SORT matched)
    list(APPEND pages ${matched})
  endforeach()
  extract_doc_examples("${WORK_DIR}/examples" "${EXAMPLES_FROM}" ${pages})
  include("${WORK_DIR}/examples/examples.cmake")
  list(LENGTH DOC_EXAMPLES count)
  list(LENGTH DOC_EXAMPLES_TO_RUN run_count)
  message(STATUS "${count} marked examples (${run_count} to run) in ${EXAMPLE_PAGES}")
  if(count EQUAL 0)
    message(FATAL_ERROR "no marked example in ${EXAMPLE_PAGES}: the extraction is broken or the sample is gone")
  endif()
  list(APPEND configure_args "-DCONSUMER_EXAMPLES_DIR=${WORK_DIR}/examples")
  set(target doc_examples)
  list(TRANSFORM DOC_EXAMPLES_TO_RUN PREPEND example_ OUTPUT_VARIABLE programs)
endif()

function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${description} failed (${status})")
  endif()
endfunction()

run_step("configuring the consumer against ${PREFIX}" "${CMAKE_COMMAND}" ${configure_args})
# The packages must come from the prefix, not from a build tree or a system installation.
file(STRINGS "${build_dir}/CMakeCache.txt" package_dirs REGEX "^(constrint|flashrnn)_DIR:")
foreach(entry IN LISTS package_dirs)
  string(REGEX REPLACE "^[^=]*=" "" directory "${entry}")
  cmake_path(IS_PREFIX PREFIX "${directory}" NORMALIZE inside)
  if(NOT inside)
    message(FATAL_ERROR "the consumer found ${entry}, outside the prefix ${PREFIX}")
  endif()
endforeach()

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run_step("building ${target}" "${CMAKE_COMMAND}" --build "${build_dir}" --target ${target} ${config_args})

foreach(program IN LISTS programs)
  set(origin "")
  if(program MATCHES "^example_(.*)$")
    set(origin " (${DOC_EXAMPLE_${CMAKE_MATCH_1}_ORIGIN})")
  endif()
  message(STATUS "running ${program}${origin}")
  execute_process(COMMAND "${build_dir}/bin/${program}" RESULT_VARIABLE status TIMEOUT 120)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${program}${origin} exited with status ${status}")
  endif()
endforeach()
message(STATUS "consumer: built and ran ${programs}")
