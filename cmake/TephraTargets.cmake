# Helpers that declare every library, binary and test once.
#
#   tephra_library(NAME SRCS ... [DEPS ...] [PRIVATE_DEPS ...])
#       static library tephra_<NAME>, alias tephra::<NAME>; DEPS are public.
#   tephra_binary(NAME SRCS ... DEPS ...)
#   tephra_test(NAME SRCS ... DEPS ... [LABELS ...])
#       Catch2 test binary; every TEST_CASE becomes a CTest test carrying LABELS.

add_library(tephra_warnings INTERFACE)
target_compile_options(tephra_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Woverloaded-virtual -Wold-style-cast -Wnull-dereference -Wimplicit-fallthrough)
if(TEPHRA_WERROR)
  target_compile_options(tephra_warnings INTERFACE -Werror)
endif()

if(TEPHRA_SANITIZERS)
  list(JOIN TEPHRA_SANITIZERS "," _tephra_san)
  add_compile_options(-fsanitize=${_tephra_san} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_tephra_san})
endif()

function(tephra_library NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(tephra_${NAME} STATIC ${ARG_SRCS})
  add_library(tephra::${NAME} ALIAS tephra_${NAME})
  target_include_directories(tephra_${NAME} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(tephra_${NAME} PUBLIC ${ARG_DEPS} PRIVATE tephra_warnings ${ARG_PRIVATE_DEPS})
endfunction()

function(tephra_binary NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  target_link_libraries(${NAME} PRIVATE tephra_warnings ${ARG_DEPS})
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

function(tephra_test NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  target_link_libraries(${NAME} PRIVATE tephra_warnings Catch2::Catch2WithMain ${ARG_DEPS})
  target_include_directories(${NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  catch_discover_tests(${NAME} TEST_PREFIX "${NAME}: " PROPERTIES LABELS "${ARG_LABELS}"
    DISCOVERY_MODE PRE_TEST)
endfunction()
