// The scalar functions behind the element-wise math ops.
//
// Each binary functor has `static Out Apply(const T& a, const T& b)`. Signed integer arithmetic
// wraps around (two's complement, as TensorFlow's kernels behave in practice) instead of being
// undefined behaviour. Functors whose inputs can be invalid (integer division by zero, integer
// powers with negative exponents) expose `static Status Check(const T* y, int64_t n)`, which the
// kernel runs over the right-hand operand before computing anything, so Apply never traps.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "base/status.h"

namespace dflow::functor {

template <typename T>
inline constexpr bool kIsSignedInt = std::is_integral_v<T>&& std::is_signed_v<T>;

// Wrapping arithmetic for signed integers; plain arithmetic otherwise.
template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<T>(a + b);
  }
}
template <typename T>
inline T WrapSub(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<T>(a - b);
  }
}
template <typename T>
inline T WrapMul(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else if constexpr (std::is_integral_v<T>) {
    // uint8 promotes to int; the product fits, and the cast back wraps.
    return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  } else {
    return a * b;
  }
}
template <typename T>
inline T WrapNeg(T a) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(a));
  } else {
    return -a;
  }
}

struct Add {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, std::string>) {
      return a + b;
    } else {
      return WrapAdd(a, b);
    }
  }
};

struct Sub {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    return WrapSub(a, b);
  }
};

struct Mul {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    return WrapMul(a, b);
  }
};

// Div and RealDiv: IEEE division for floating point; for integers, C++ division (truncating
// toward zero, as TensorFlow's C++ Div kernel does), with INT_MIN / -1 wrapping.
struct Div {
  template <typename T>
  static Status Check(const T* y, int64_t n) {
    if constexpr (std::is_integral_v<T>) {
      for (int64_t i = 0; i < n; ++i) {
        if (y[i] == 0) return errors::InvalidArgument("Integer division by zero");
      }
    }
    return absl::OkStatus();
  }
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (kIsSignedInt<T>) {
      if (b == -1) return WrapNeg(a);
      return static_cast<T>(a / b);
    } else {
      return static_cast<T>(a / b);
    }
  }
};

// x ** y. Integer powers by repeated squaring with wrap-around; negative integer exponents are
// rejected as in TensorFlow.
struct Pow {
  template <typename T>
  static Status Check(const T* y, int64_t n) {
    if constexpr (kIsSignedInt<T>) {
      for (int64_t i = 0; i < n; ++i) {
        if (y[i] < 0) return errors::InvalidArgument("Integers to negative integer powers are not allowed");
      }
    }
    return absl::OkStatus();
  }
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) {
      T result = 1, base = a;
      for (std::make_unsigned_t<T> e = static_cast<std::make_unsigned_t<T>>(b); e != 0; e >>= 1) {
        if (e & 1) result = WrapMul(result, base);
        base = WrapMul(base, base);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};

struct Greater {
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a > b;
  }
};

struct Less {
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a < b;
  }
};

struct Equal {
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a == b;
  }
};

struct GreaterEqual {
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a >= b;
  }
};

struct LessEqual {
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a <= b;
  }
};

struct NotEqual {
  static constexpr bool kIncompatibleShapes = true;  // shapes that do not broadcast are "not equal"
  template <typename T>
  static bool Apply(const T& a, const T& b) {
    return a != b;
  }
};

struct LogicalAnd {
  static bool Apply(const bool& a, const bool& b) { return a && b; }
};

struct LogicalOr {
  static bool Apply(const bool& a, const bool& b) { return a || b; }
};

// Rejects integer division by zero (shared by FloorDiv and FloorMod).
struct NonZeroIntegerDivisor {
  template <typename T>
  static Status Check(const T* y, int64_t n) {
    if constexpr (std::is_integral_v<T>) {
      for (int64_t i = 0; i < n; ++i) {
        if (y[i] == 0) return errors::InvalidArgument("Integer division by zero");
      }
    }
    return absl::OkStatus();
  }
};

// floor(x / y): integers round toward negative infinity (INT_MIN / -1 wraps); floating point
// is floor of the IEEE quotient.
struct FloorDiv : NonZeroIntegerDivisor {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (kIsSignedInt<T>) {
      if (b == -1) return WrapNeg(a);
      const T q = static_cast<T>(a / b);
      // C++ truncates; step down when the signs differ and the division is inexact.
      return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(a / b);
    } else {
      return std::floor(a / b);
    }
  }
};

// x - floor(x / y) * y: the result has the sign of y (Python's %).
struct FloorMod : NonZeroIntegerDivisor {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (kIsSignedInt<T>) {
      if (b == -1) return 0;  // INT_MIN % -1 is undefined in C++
      const T r = static_cast<T>(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(a % b);
    } else {
      const T r = std::fmod(a, b);
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
  }
};

// Maximum and Minimum propagate NaN from either side.
struct Maximum {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return a >= b ? a : b;
  }
};

struct Minimum {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return a <= b ? a : b;
  }
};

struct SquaredDifference {
  template <typename T>
  static T Apply(const T& a, const T& b) {
    const T d = WrapSub(a, b);
    return WrapMul(d, d);
  }
};

// Unary functors: `static T Apply(const T& a)`.
struct Neg {
  template <typename T>
  static T Apply(const T& a) {
    return WrapNeg(a);
  }
};

struct Exp {
  template <typename T>
  static T Apply(const T& a) {
    return std::exp(a);
  }
};

struct Log {
  template <typename T>
  static T Apply(const T& a) {
    return std::log(a);
  }
};

struct Abs {
  template <typename T>
  static T Apply(const T& a) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(a);
    } else {
      return a < 0 ? WrapNeg(a) : a;  // INT_MIN stays INT_MIN, as in two's complement
    }
  }
};

// -1, 0 or 1; NaN stays NaN.
struct Sign {
  template <typename T>
  static T Apply(const T& a) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return a;
    }
    return static_cast<T>((T{0} < a) - (a < T{0}));
  }
};

struct Square {
  template <typename T>
  static T Apply(const T& a) {
    return WrapMul(a, a);
  }
};

struct Sqrt {
  template <typename T>
  static T Apply(const T& a) {
    return std::sqrt(a);
  }
};

struct Rsqrt {
  template <typename T>
  static T Apply(const T& a) {
    return T{1} / std::sqrt(a);
  }
};

struct Reciprocal {
  template <typename T>
  static T Apply(const T& a) {
    return T{1} / a;
  }
};

struct Log1p {
  template <typename T>
  static T Apply(const T& a) {
    return std::log1p(a);
  }
};

struct Tanh {
  template <typename T>
  static T Apply(const T& a) {
    return std::tanh(a);
  }
};

// 1 / (1 + e^-x), written so that neither branch overflows.
struct Sigmoid {
  template <typename T>
  static T Apply(const T& a) {
    if (a >= T{0}) return T{1} / (T{1} + std::exp(-a));
    const T e = std::exp(a);
    return e / (T{1} + e);
  }
};

struct Floor {
  template <typename T>
  static T Apply(const T& a) {
    return std::floor(a);
  }
};

struct Ceil {
  template <typename T>
  static T Apply(const T& a) {
    return std::ceil(a);
  }
};

// Rounds half to even (banker's rounding), as TensorFlow's Round; integers are unchanged.
struct Round {
  template <typename T>
  static T Apply(const T& a) {
    if constexpr (std::is_floating_point_v<T>) {
      const T f = std::floor(a);
      const T diff = a - f;
      if (diff > T(0.5)) return f + T{1};
      if (diff < T(0.5)) return f;
      return std::fmod(f, T{2}) == T{0} ? f : f + T{1};  // a tie: the even neighbour
    } else {
      return a;
    }
  }
};

struct LogicalNot {
  static bool Apply(const bool& a) { return !a; }
};

}  // namespace dflow::functor
