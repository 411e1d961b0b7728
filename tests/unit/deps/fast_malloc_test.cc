// tephra::fast_malloc (cmake/TephraDependencies.cmake): in a binary that links it, every
// allocation comes from mimalloc — C's malloc, operator new, and the C library's own.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mimalloc.h>
#include <string>

#include <catch2/catch.hpp>

namespace {

TEST_CASE("malloc, operator new and strdup allocate from mimalloc") {
  void* c = std::malloc(100);
  auto cxx = std::make_unique<std::string>(1000, 'x');
  char* dup = strdup("tephra");
  CHECK(mi_is_in_heap_region(c));
  CHECK(mi_is_in_heap_region(cxx.get()));
  CHECK(mi_is_in_heap_region(cxx->data()));
  CHECK(mi_is_in_heap_region(dup));
  std::free(dup);
  std::free(c);
}

}  // namespace
