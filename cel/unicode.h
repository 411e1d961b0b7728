// UTF-8 helpers for CEL strings, which are sequences of code points (size() counts code
// points, the string extensions index by them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tephra::cel {

// Appends code point `code` as UTF-8; false for surrogates and values above U+10FFFF.
bool AppendUtf8(std::string* out, uint32_t code);

// Whether text is well-formed UTF-8 (no surrogates, no overlong forms); counts code points.
bool IsValidUtf8(std::string_view text, size_t* code_points = nullptr);

// Code points in valid UTF-8 text.
size_t CountCodePoints(std::string_view text);

// Decodes the code point starting at text[*pos] and advances *pos past it. The text must be
// valid UTF-8.
uint32_t DecodeUtf8(std::string_view text, size_t* pos);

// The byte offset of code point number `index` (CountCodePoints(text) gives text.size()).
size_t CodePointOffset(std::string_view text, size_t index);

}  // namespace tephra::cel
