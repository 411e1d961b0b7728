# Helpers that declare every library, binary and test once.
#
#   tephra_library(NAME SRCS ... [DEPS ...] [PRIVATE_DEPS ...])
#       static library tephra_<NAME>, alias tephra::<NAME>; DEPS are public. Without SRCS it is
#       a header-only (INTERFACE) library and takes DEPS only.
#   tephra_binary(NAME SRCS ... DEPS ...)
#   tephra_test(NAME SRCS ... DEPS ... [LABELS ...] [SERIAL])
#       Catch2 test binary; every TEST_CASE becomes a CTest test carrying LABELS.
#   tephra_fuzz(NAME SRCS ... DEPS ... CORPUS dir [GENERATOR script.py])
#       A libFuzzer target (LLVMFuzzerTestOneInput). In the `fuzz` preset (clang, TEPHRA_FUZZ)
#       it is a real fuzzer run by CTest (label fuzz) for TEPHRA_FUZZ_SECONDS; in every other
#       build it is linked with a replay driver and CTest runs it over its seed corpus as a unit
#       test, and tephra_fuzz_in_ctest() adds the real fuzzing under label fuzz as well.
#       GENERATOR writes inputs too large to commit; fuzzing runs them first.

add_library(tephra_warnings INTERFACE)
target_compile_options(tephra_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Woverloaded-virtual -Wold-style-cast -Wimplicit-fallthrough)
# -Wnull-dereference is left out: g++ 12 reports false positives inside inlined libstdc++ code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 at -O3 reports impossible overlaps inside inlined std::string code (GCC PR 105329).
  target_compile_options(tephra_warnings INTERFACE -Wno-restrict)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # RapidJSON 1.1's member iterators compare ambiguously under C++20's reversed operators.
  target_compile_options(tephra_warnings INTERFACE -Wno-ambiguous-reversed-operator)
  # Locks are sync::Mutex (sync/mutex.h) and the members they guard GUARDED_BY: clang checks
  # every access (the `clang` preset and the lint:thread-safety test build all production code).
  target_compile_options(tephra_warnings INTERFACE -Wthread-safety)
endif()
if(TEPHRA_WERROR)
  target_compile_options(tephra_warnings INTERFACE -Werror)
endif()

# RapidJSON 1.1 (Debian's) offsets a null stack pointer on its first push, which UBSan's
# pointer-overflow check reports although nothing is dereferenced; every other check stays on.
set(TEPHRA_UBSAN_EXCLUSIONS -fno-sanitize=pointer-overflow)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # clang 14's function sanitizer cannot compile C++20 coroutines (Asio awaitables):
  # "Cannot represent a difference across sections".
  list(APPEND TEPHRA_UBSAN_EXCLUSIONS -fno-sanitize=function)
endif()

if(TEPHRA_SANITIZERS)
  list(JOIN TEPHRA_SANITIZERS "," _tephra_san)
  add_compile_options(-fsanitize=${_tephra_san} -fno-sanitize-recover=all -fno-omit-frame-pointer
    ${TEPHRA_UBSAN_EXCLUSIONS})
  add_link_options(-fsanitize=${_tephra_san})
  if("thread" IN_LIST TEPHRA_SANITIZERS AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ warns that TSan does not model atomic_thread_fence, which Boost.Asio's handler
    # hand-off uses; the hand-off itself is ordered by Asio's mutexes, which TSan sees.
    add_compile_options(-Wno-tsan)
  endif()
endif()

function(tephra_library NAME)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_SRCS)
    add_library(tephra_${NAME} INTERFACE)
    add_library(tephra::${NAME} ALIAS tephra_${NAME})
    target_include_directories(tephra_${NAME} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(tephra_${NAME} INTERFACE ${ARG_DEPS})
    return()
  endif()
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
  cmake_parse_arguments(ARG "SERIAL" "" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  target_link_libraries(${NAME} PRIVATE tephra_warnings Catch2::Catch2WithMain ${ARG_DEPS})
  target_include_directories(${NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # --warn NoTests: a test name that matches nothing (e.g. one cut at a ";") fails loudly.
  # SERIAL: tests that disturb the shared control plane (restarts) run alone.
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  # Catch2 v2 passes PROPERTIES through a command line, so LABELS can hold one label only.
  list(LENGTH ARG_LABELS label_count)
  if(label_count GREATER 1)
    message(FATAL_ERROR "tephra_test(${NAME}): one label only (got ${ARG_LABELS})")
  endif()
  catch_discover_tests(${NAME} TEST_PREFIX "${NAME}: " EXTRA_ARGS --warn NoTests
    PROPERTIES LABELS ${ARG_LABELS} RUN_SERIAL ${serial})
endfunction()

# Time budget of each fuzz target. The fuzz label is part of every full test run, where building
# the targets with clang already takes most of its time; TEPHRA_FUZZ_SECONDS in the environment
# of the test run overrides it for a longer hunt. (Not a cache variable: a value cached by an
# older build directory would win.)
set(TEPHRA_FUZZ_SECONDS 20)
if(TEPHRA_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
    ${TEPHRA_UBSAN_EXCLUSIONS})
  add_link_options(-fsanitize=address,undefined)
endif()

# The CTest command running fuzz target NAME built in BINARY_DIR (see tests/fuzz/run_fuzzer.sh).
function(_tephra_fuzz_test NAME BINARY_DIR CORPUS GENERATOR)
  add_test(NAME fuzz:${NAME}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz/run_fuzzer.sh ${BINARY_DIR}/fuzz/${NAME}
            ${TEPHRA_FUZZ_SECONDS} ${BINARY_DIR}/fuzz/${NAME}.work ${CORPUS} ${GENERATOR})
  # Generous: the corpus load and the generated inputs come on top of the budget.
  math(EXPR timeout "${TEPHRA_FUZZ_SECONDS} * 3 + 600")
  set_tests_properties(fuzz:${NAME} PROPERTIES LABELS fuzz TIMEOUT ${timeout})
endfunction()

function(tephra_fuzz NAME)
  cmake_parse_arguments(ARG "" "CORPUS;GENERATOR" "SRCS;DEPS" ${ARGN})
  add_executable(${NAME} ${ARG_SRCS})
  target_link_libraries(${NAME} PRIVATE tephra_warnings ${ARG_DEPS})
  target_include_directories(${NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  set_target_properties(${NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  get_filename_component(corpus ${ARG_CORPUS} ABSOLUTE)
  set(generator "")
  if(ARG_GENERATOR)
    get_filename_component(generator ${ARG_GENERATOR} ABSOLUTE)
  endif()
  set_property(GLOBAL APPEND PROPERTY TEPHRA_FUZZ_TARGETS ${NAME})
  set_property(GLOBAL PROPERTY TEPHRA_FUZZ_CORPUS_${NAME} ${corpus})
  set_property(GLOBAL PROPERTY TEPHRA_FUZZ_GENERATOR_${NAME} "${generator}")
  if(TEPHRA_FUZZ)
    target_link_options(${NAME} PRIVATE -fsanitize=fuzzer)
    _tephra_fuzz_test(${NAME} ${PROJECT_BINARY_DIR} ${corpus} "${generator}")
  else()
    target_sources(${NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cc)
    add_test(NAME fuzz-replay:${NAME} COMMAND ${NAME} ${corpus})
    set_tests_properties(fuzz-replay:${NAME} PROPERTIES LABELS unit)
  endif()
endfunction()

# In an ordinary build (TEPHRA_FUZZ off), the `fuzz` label still fuzzes for real: `fuzz-build`
# configures the `fuzz` preset (clang-14) in <build>/fuzz-preset and builds every target declared
# with tephra_fuzz, then `fuzz:<target>` runs each for TEPHRA_FUZZ_SECONDS. Call once, after the
# last tephra_fuzz.
function(tephra_fuzz_in_ctest)
  if(TEPHRA_FUZZ)
    return()
  endif()
  get_property(names GLOBAL PROPERTY TEPHRA_FUZZ_TARGETS)
  set(dir ${PROJECT_BINARY_DIR}/fuzz-preset)
  add_test(NAME fuzz-build
    COMMAND ${PROJECT_SOURCE_DIR}/tests/fuzz/build_fuzzers.sh ${dir} ${names}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(fuzz-build PROPERTIES LABELS fuzz FIXTURES_SETUP tephra_fuzz_build
    TIMEOUT 7200 RUN_SERIAL TRUE)
  foreach(name IN LISTS names)
    get_property(corpus GLOBAL PROPERTY TEPHRA_FUZZ_CORPUS_${name})
    get_property(generator GLOBAL PROPERTY TEPHRA_FUZZ_GENERATOR_${name})
    _tephra_fuzz_test(${name} ${dir} ${corpus} "${generator}")
    set_tests_properties(fuzz:${name} PROPERTIES FIXTURES_REQUIRED tephra_fuzz_build)
  endforeach()
endfunction()
