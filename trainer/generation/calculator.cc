// Arithmetic is a recursive-descent parser over Python's grammar for these operators:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/' | '//') unary)*
//   unary   := ('+' | '-') unary | atom
//   atom    := number | '(' sum ')'
// Values are Python's int (int64 here; overflow is an error) or float.
#include "trainer/generation/calculator.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <variant>

#include "absl/strings/str_cat.h"

namespace gpt_sft::trainer {
namespace {

using Value = std::variant<int64_t, double>;

double AsDouble(const Value& v) {
  return std::holds_alternative<int64_t>(v) ? double(std::get<int64_t>(v)) : std::get<double>(v);
}

class Arithmetic {
 public:
  explicit Arithmetic(std::string_view text) : s_(text) {}

  std::optional<Value> Parse() {
    std::optional<Value> v = Sum();
    Skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  bool Eat(std::string_view token) {
    Skip();
    if (s_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }

  std::optional<Value> Sum() {
    std::optional<Value> v = Product();
    while (v) {
      if (Eat("+")) v = Apply(*v, '+', Product());
      else if (Eat("-")) v = Apply(*v, '-', Product());
      else break;
    }
    return v;
  }
  std::optional<Value> Product() {
    std::optional<Value> v = Unary();
    while (v) {
      if (Eat("//")) v = Apply(*v, 'f', Unary());
      else if (Eat("*")) v = Apply(*v, '*', Unary());
      else if (Eat("/")) v = Apply(*v, '/', Unary());
      else break;
    }
    return v;
  }
  std::optional<Value> Unary() {
    if (Eat("-")) return Apply(Value(int64_t{0}), '-', Unary());
    if (Eat("+")) return Unary();
    return Atom();
  }
  std::optional<Value> Atom() {
    if (Eat("(")) {
      std::optional<Value> v = Sum();
      if (!v || !Eat(")")) return std::nullopt;
      return v;
    }
    Skip();
    const size_t start = i_;
    bool dot = false;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || (s_[i_] == '.' && !dot))) {
      dot |= s_[i_] == '.';
      ++i_;
    }
    const std::string number(s_.substr(start, i_ - start));
    if (number.empty() || number == ".") return std::nullopt;
    if (dot) return Value(std::strtod(number.c_str(), nullptr));
    int64_t n = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), n);
    if (ec != std::errc()) return std::nullopt;  // too large for int64
    return Value(n);
  }

  static std::optional<Value> Apply(const Value& a, char op, std::optional<Value> b) {
    if (!b) return std::nullopt;
    if (std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(*b) && op != '/') {
      const int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(*b);
      int64_t r;
      switch (op) {
        case '+': if (__builtin_add_overflow(x, y, &r)) return std::nullopt; return Value(r);
        case '-': if (__builtin_sub_overflow(x, y, &r)) return std::nullopt; return Value(r);
        case '*': if (__builtin_mul_overflow(x, y, &r)) return std::nullopt; return Value(r);
        default:  // floor division
          if (y == 0) return std::nullopt;
          r = x / y;
          if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
          return Value(r);
      }
    }
    const double x = AsDouble(a), y = AsDouble(*b);
    switch (op) {
      case '+': return Value(x + y);
      case '-': return Value(x - y);
      case '*': return Value(x * y);
      case '/': if (y == 0) return std::nullopt; return Value(x / y);
      default: if (y == 0) return std::nullopt; return Value(std::floor(x / y));
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

/// Python's repr of a float: the shortest digits that round-trip, positional when the
/// decimal exponent is in [-4, 16), else d.ddde+XX.
std::string PythonFloat(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, end);  // -d.ddde+XX
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  const int exponent = std::atoi(sci.c_str() + e + 1);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char exp[16];  // room for any int exponent, so the format cannot truncate
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return sign + mantissa + exp;
  }
  std::string out;
  if (exponent < 0) {
    out = "0." + std::string(-exponent - 1, '0') + digits;
  } else if (static_cast<int>(digits.size()) <= exponent + 1) {
    out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return sign + out;
}

/// 'letters'.count('x') with either quote on each string.
std::optional<std::string> StringCount(std::string_view expr) {
  auto quoted = [&](size_t& i, std::string& out) {
    if (i >= expr.size() || (expr[i] != '\'' && expr[i] != '"')) return false;
    const char q = expr[i];
    const size_t close = expr.find(q, i + 1);
    if (close == std::string_view::npos) return false;
    out = std::string(expr.substr(i + 1, close - i - 1));
    i = close + 1;
    return true;
  };
  std::string text, needle;
  size_t i = 0;
  while (i < expr.size() && expr[i] == ' ') ++i;
  if (!quoted(i, text) || expr.substr(i, 7) != ".count(") return std::nullopt;
  i += 7;
  if (!quoted(i, needle) || expr.substr(i, 1) != ")") return std::nullopt;
  ++i;
  while (i < expr.size() && expr[i] == ' ') ++i;
  if (i != expr.size()) return std::nullopt;
  // Python's str.count: non-overlapping; an empty needle counts len + 1.
  if (needle.empty()) return absl::StrCat(text.size() + 1);
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return absl::StrCat(count);
}

}  // namespace

std::optional<std::string> UseCalculator(std::string_view raw) {
  std::string expr;
  for (char c : raw) {
    if (c != ',') expr += c;
  }
  const bool arithmetic = expr.find_first_not_of("0123456789*+-/.() ") == std::string::npos;
  if (arithmetic) {
    if (expr.find("**") != std::string::npos) return std::nullopt;
    std::optional<Value> v = Arithmetic(expr).Parse();
    if (!v) return std::nullopt;
    if (std::holds_alternative<int64_t>(*v)) return absl::StrCat(std::get<int64_t>(*v));
    return PythonFloat(std::get<double>(*v));
  }
  if (expr.find(".count(") == std::string::npos) return std::nullopt;
  return StringCount(expr);
}

ToolUse CalculatorTool(const data::Tokenizer& tok) {
  ToolUse tool;
  tool.python_start = tok.SpecialId(data::SpecialToken::kPythonStart);
  tool.python_end = tok.SpecialId(data::SpecialToken::kPythonEnd);
  tool.output_start = tok.SpecialId(data::SpecialToken::kOutputStart);
  tool.output_end = tok.SpecialId(data::SpecialToken::kOutputEnd);
  tool.run = [&tok](const std::vector<int32_t>& code) -> std::optional<std::vector<int32_t>> {
    std::optional<std::string> result = UseCalculator(tok.Decode(code));
    if (!result) return std::nullopt;
    return tok.Encode(*result);
  };
  return tool;
}

}  // namespace gpt_sft::trainer
