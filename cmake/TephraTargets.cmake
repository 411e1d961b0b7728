# Helpers that declare every library, binary and test once.
#
#   tephra_library(NAME SRCS ... [DEPS ...] [PRIVATE_DEPS ...])
#       static library tephra_<NAME>, alias tephra::<NAME>; DEPS are public. Without SRCS it is
#       a header-only (INTERFACE) library and takes DEPS only.
#   tephra_binary(NAME SRCS ... DEPS ...)
#   tephra_test(NAME SRCS ... DEPS ... [LABELS ...] [SERIAL])
#       Catch2 test binary; every TEST_CASE becomes a CTest test carrying LABELS.
#   tephra_fuzz(NAME SRCS ... DEPS ... CORPUS dir [GENERATOR script.py])
#       A libFuzzer target (LLVMFuzzerTestOneInput). In the `sanitize` preset (clang, TEPHRA_FUZZ)
#       it is a real fuzzer run by CTest (label fuzz) for TEPHRA_FUZZ_SECONDS; in every other
#       build it is linked with a replay driver and CTest runs it over its seed corpus as a unit
#       test, and tephra_fuzz_in_ctest() adds the real fuzzing under label fuzz as well.
#       GENERATOR writes inputs too large to commit; fuzzing runs them first.
#   tephra_forbid_links(TARGETS name ... FORBID target ... BECAUSE "why")
#       A layering rule the configure enforces: when one of TARGETS (tephra_library names) links
#       one of FORBID (any target, e.g. tephra::kube), directly or through any library it links
#       (public or private), the configure fails naming the path. Checked once every target
#       exists, at the end of the top-level directory.

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
# the targets with clang (the sanitize build) already takes most of its time; TEPHRA_FUZZ_SECONDS in the environment
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

# In an ordinary build (TEPHRA_FUZZ off), the `fuzz` label still fuzzes for real: the sanitize
# build (tests/sanitize: the `sanitize` preset in <build>/sanitize, a CTest fixture) builds every
# target declared with tephra_fuzz, then `fuzz:<target>` runs each for TEPHRA_FUZZ_SECONDS. Call
# once, after the last tephra_fuzz.
function(tephra_fuzz_in_ctest)
  if(TEPHRA_FUZZ)
    return()
  endif()
  get_property(names GLOBAL PROPERTY TEPHRA_FUZZ_TARGETS)
  foreach(name IN LISTS names)
    get_property(corpus GLOBAL PROPERTY TEPHRA_FUZZ_CORPUS_${name})
    get_property(generator GLOBAL PROPERTY TEPHRA_FUZZ_GENERATOR_${name})
    _tephra_fuzz_test(${name} ${PROJECT_BINARY_DIR}/sanitize ${corpus} "${generator}")
    set_tests_properties(fuzz:${name} PROPERTIES FIXTURES_REQUIRED tephra_sanitize)
  endforeach()
endfunction()

# Layering rules (tephra_forbid_links). A rule is "target|forbidden" (its reason in a property of
# its own), kept in a global property until every target exists; then _tephra_check_link_rules
# walks each target's links.
function(tephra_forbid_links)
  cmake_parse_arguments(ARG "" "BECAUSE" "TARGETS;FORBID" ${ARGN})
  if(NOT ARG_TARGETS OR NOT ARG_FORBID OR NOT ARG_BECAUSE)
    message(FATAL_ERROR "tephra_forbid_links: TARGETS, FORBID and BECAUSE are required")
  endif()
  get_property(scheduled GLOBAL PROPERTY TEPHRA_LINK_RULES_SCHEDULED)
  if(NOT scheduled)
    set_property(GLOBAL PROPERTY TEPHRA_LINK_RULES_SCHEDULED TRUE)
    cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _tephra_check_link_rules)
  endif()
  foreach(target IN LISTS ARG_TARGETS)
    foreach(forbidden IN LISTS ARG_FORBID)
      set_property(GLOBAL APPEND PROPERTY TEPHRA_LINK_RULES "${target}|${forbidden}")
      set_property(GLOBAL PROPERTY TEPHRA_LINK_RULE_WHY_${target}|${forbidden} "${ARG_BECAUSE}")
    endforeach()
  endforeach()
endfunction()

# The target NAME stands for (an alias resolved), or "" when NAME is no target (a file, a flag).
function(_tephra_link_target NAME OUT)
  set(real "")
  if(TARGET "${NAME}")
    get_target_property(aliased "${NAME}" ALIASED_TARGET)
    if(aliased)
      set(real ${aliased})
    else()
      set(real ${NAME})
    endif()
  endif()
  set(${OUT} "${real}" PARENT_SCOPE)
endfunction()

# The targets TARGET links directly: its own link libraries and those it passes on. A static
# library's private links come back as $<LINK_ONLY:x>, and they are linked too.
function(_tephra_direct_links TARGET OUT)
  set(items "")
  foreach(property IN ITEMS LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(values ${TARGET} ${property})
    if(values)
      list(APPEND items ${values})
    endif()
  endforeach()
  set(links "")
  foreach(item IN LISTS items)
    if(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
      set(item ${CMAKE_MATCH_1})
    endif()
    _tephra_link_target("${item}" real)
    if(real)
      list(APPEND links ${real})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES links)
  set(${OUT} "${links}" PARENT_SCOPE)
endfunction()

# The shortest chain "a -> b -> ... -> TO" of links from FROM to TO, or "" when there is none.
function(_tephra_link_path FROM TO OUT)
  set(queue ${FROM})
  set(seen ${FROM})
  while(queue)
    list(POP_FRONT queue current)
    _tephra_direct_links(${current} links)
    foreach(link IN LISTS links)
      if(link IN_LIST seen)
        continue()
      endif()
      list(APPEND seen ${link})
      set(_via_${link} ${current})
      if(link STREQUAL TO)
        set(path ${link})
        while(NOT link STREQUAL FROM)
          set(link ${_via_${link}})
          list(PREPEND path ${link})
        endwhile()
        list(JOIN path " -> " path)
        set(${OUT} "${path}" PARENT_SCOPE)
        return()
      endif()
      list(APPEND queue ${link})
    endforeach()
  endwhile()
  set(${OUT} "" PARENT_SCOPE)
endfunction()

function(_tephra_check_link_rules)
  get_property(rules GLOBAL PROPERTY TEPHRA_LINK_RULES)
  set(broken "")
  foreach(rule IN LISTS rules)
    string(REPLACE "|" ";" parts "${rule}")
    list(GET parts 0 target)
    list(GET parts 1 forbidden)
    get_property(why GLOBAL PROPERTY TEPHRA_LINK_RULE_WHY_${rule})
    _tephra_link_target(tephra::${target} from)
    _tephra_link_target(${forbidden} to)
    if(NOT from OR NOT to)
      message(FATAL_ERROR "tephra_forbid_links: no target tephra::${target} or ${forbidden}")
    endif()
    _tephra_link_path(${from} ${to} path)
    if(path)
      string(APPEND broken "\n  ${target} must not link ${forbidden} (${why}): ${path}")
    endif()
  endforeach()
  if(broken)
    message(FATAL_ERROR "layering broken (docs/architecture.md, What may depend on what):${broken}")
  endif()
endfunction()
