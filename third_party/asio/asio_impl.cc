// The one translation unit that compiles Boost.Asio, Asio's SSL support and Boost.Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION, set on tephra::boost).
// Every other file includes only their headers, which keeps the 2-core build affordable.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
