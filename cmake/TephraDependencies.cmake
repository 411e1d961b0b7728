# Third-party dependencies, all from Debian bookworm packages (hack/install-deps.sh).
# Every third-party include directory enters as SYSTEM so that -Werror applies to our code only.

find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG COMPONENTS system)
find_package(glog REQUIRED CONFIG)
find_package(yaml-cpp REQUIRED CONFIG)
find_package(PkgConfig REQUIRED)
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)
# RE2: Go's regexp syntax, which Volcano's HyperNode regexMatch uses, checked in linear time.
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
find_program(PROTOC_EXECUTABLE protoc REQUIRED)
find_program(GRPC_CPP_PLUGIN_EXECUTABLE grpc_cpp_plugin REQUIRED)

# RapidJSON ships only an include path. Asserts become exceptions-free checks in one place:
# all reads go through json/json.h's checked accessors, so an assert firing is a bug in ours.
find_package(RapidJSON REQUIRED CONFIG)
add_library(tephra_rapidjson INTERFACE)
target_include_directories(tephra_rapidjson SYSTEM INTERFACE ${RAPIDJSON_INCLUDE_DIRS})
target_compile_definitions(tephra_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)
add_library(tephra::rapidjson ALIAS tephra_rapidjson)

# Boost.Asio and Boost.Beast are compiled once (third_party/asio/asio_impl.cc) instead of in every
# translation unit that includes them.
add_library(tephra_boost INTERFACE)
target_link_libraries(tephra_boost INTERFACE Boost::headers Boost::system OpenSSL::SSL OpenSSL::Crypto
  Threads::Threads)
target_compile_definitions(tephra_boost INTERFACE
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED)
add_library(tephra::boost ALIAS tephra_boost)

# The scheduler's allocator (docs/architecture.md, "Memory allocator"): mimalloc. Linked ahead of
# the C library, its malloc and operator new serve the whole process; nothing calls it by name.
# Sanitizer and fuzz builds keep the C library's, which they replace themselves.
set(TEPHRA_MALLOC "mimalloc" CACHE STRING
  "Allocator of tephra-scheduler and the in-process scheduler benchmarks: mimalloc or system")
set_property(CACHE TEPHRA_MALLOC PROPERTY STRINGS mimalloc system)
add_library(tephra_fast_malloc INTERFACE)
add_library(tephra::fast_malloc ALIAS tephra_fast_malloc)
if(TEPHRA_MALLOC STREQUAL "mimalloc" AND NOT TEPHRA_SANITIZERS AND NOT TEPHRA_FUZZ)
  find_package(mimalloc 2 REQUIRED CONFIG)
  target_link_libraries(tephra_fast_malloc INTERFACE mimalloc)
elseif(NOT TEPHRA_MALLOC STREQUAL "system" AND NOT TEPHRA_MALLOC STREQUAL "mimalloc")
  message(FATAL_ERROR "TEPHRA_MALLOC is '${TEPHRA_MALLOC}': mimalloc or system")
endif()

if(TEPHRA_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED CONFIG)
  include(Catch)
endif()
if(TEPHRA_BUILD_BENCH)
  find_package(benchmark REQUIRED CONFIG)
endif()
