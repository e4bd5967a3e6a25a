// Result<T, E>: a value or an error, for the association layer's decode-like paths.
//
// std::expected is not available with g++ 12, so the layer carries this small LevelDB-style
// holder: construct with a value or with an error, test ok(), then read value() or error().
// Reading the wrong side is a programming error (asserted in debug builds).
//
// Threading: a plain value type; no shared state.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

namespace npac::associations {

// Tag to construct the error side when T and E could be confused.
template <typename E>
struct Err {
  E error;
};
template <typename E>
Err<E> err(E error) {
  return Err<E>{std::move(error)};
}

template <typename T, typename E>
class Result {
 public:
  Result(T value) : storage_(std::in_place_index<0>, std::move(value)) {}
  Result(Err<E> error) : storage_(std::in_place_index<1>, std::move(error.error)) {}

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<0>(storage_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(storage_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(storage_));
  }
  const E& error() const {
    assert(!ok());
    return std::get<1>(storage_);
  }

 private:
  std::variant<T, E> storage_;
};

}  // namespace npac::associations
