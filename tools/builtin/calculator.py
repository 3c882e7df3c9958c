"""A safe arithmetic calculator: the expression is parsed with ``ast`` and only whitelisted nodes are evaluated.

Never ``eval``: model-written text reaches this tool, and Python's eval is one attribute chain away from
running arbitrary code. Size guards stop expressions that are valid arithmetic but would eat the CPU or
memory (``9**9**9``).
"""

import ast
import math
import operator
from collections.abc import Callable

from tools.base import tool

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 10_000
# Python refuses to print ints above 4300 digits (sys.int_info.default_max_str_digits); stay below it.
MAX_RESULT_DIGITS = 4_000
# Integers at or below this magnitude print exactly when they come out of float arithmetic (10/2 → "5").
_EXACT_FLOAT_INT = 2**53

_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "min": lambda *values: min(values),  # min(5) is 5, not "int is not iterable"
    "max": lambda *values: max(values),
}
# Friendlier names for the syntax people (and models) most often try.
_SYNTAX_NAMES = {
    ast.Attribute: "attribute access",
    ast.Subscript: "indexing",
    ast.Lambda: "lambda",
    ast.Compare: "comparison",
    ast.BoolOp: "boolean operator",
    ast.IfExp: "conditional expression",
    ast.BitAnd: "'&'",
    ast.BitOr: "'|'",
    ast.LShift: "'<<'",
    ast.RShift: "'>>'",
    ast.Invert: "'~'",
    ast.Not: "'not'",
    ast.MatMult: "'@'",
}
# Typographic forms a person or a model may write; '^' is power, as on a calculator.
_REPLACEMENTS = {
    "^": "**",
    "\N{MULTIPLICATION SIGN}": "*",
    "\N{DIVISION SIGN}": "/",
    "\N{MINUS SIGN}": "-",
    "\N{GREEK SMALL LETTER PI}": "pi",
}


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result.

    Args:
        expression: The expression, e.g. "23 * 19", "(2 + 3) ^ 2", "sqrt(2) / 2" or "log(8, 2)".
            Supports + - * / // % ** ^, parentheses, pi, e, tau and the functions sqrt, abs, round,
            floor, ceil, log, log10, log2, exp, sin, cos, tan, asin, acos, atan, min, max.
    """
    return format_number(evaluate(expression))


def evaluate(expression: str) -> int | float:
    """Evaluate ``expression`` safely. Raises ValueError with a message meant for a person."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"Expression is too long ({len(expression)} characters; the limit is {MAX_EXPRESSION_CHARS}).")
    for symbol, replacement in _REPLACEMENTS.items():
        expression = expression.replace(symbol, replacement)
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        result = _eval(tree.body)
    except SyntaxError as exc:
        raise ValueError(f"Invalid expression: {exc.msg}") from None
    except ZeroDivisionError:
        raise ValueError("Division by zero.") from None
    except OverflowError:
        raise ValueError("Result is too large.") from None
    except RecursionError:
        raise ValueError("Expression is too deeply nested.") from None
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError("Result is not a finite number.")
    return result


def format_number(value: int | float) -> str:
    """Integers as integers, whole floats without ".0" (10/2 → "5"), other floats via repr."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_FLOAT_INT:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant):
        return _number(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _binary(node.op, _eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name):
        return _constant(node.id)
    if isinstance(node, ast.Call):
        return _call(node)
    raise ValueError(f"Unsupported syntax: {_syntax_name(node)}.")


def _number(value: object) -> int | float:
    # bool is an int subclass, and complex numbers / strings / bytes are constants too: refuse them.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"Unsupported value: {value!r}.")
    return value


def _binary(op: ast.operator, left: int | float, right: int | float) -> int | float:
    if isinstance(op, ast.Pow):
        _check_power(left, right)
    result = _BINARY[type(op)](left, right)
    if isinstance(result, complex):
        raise ValueError("Result is not a real number (e.g. a fractional power of a negative number).")
    _check_size(result)
    return result


def _check_power(base: int | float, exponent: int | float) -> None:
    """Refuse a power before computing it when it would be huge: 2**99999999 must not even start."""
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"Exponent is too large (the limit is {MAX_EXPONENT}).")
    exact = isinstance(base, int) and isinstance(exponent, int)  # float powers overflow on their own, cheaply
    if exact and abs(base) > 1 and exponent > 0 and exponent * math.log10(abs(base)) > MAX_RESULT_DIGITS:
        raise ValueError(f"Result would have more than {MAX_RESULT_DIGITS} digits.")


def _check_size(value: int | float) -> None:
    # bit_length * log10(2) ≈ number of decimal digits, without the cost of converting to a string.
    if isinstance(value, int) and value.bit_length() * 0.30103 > MAX_RESULT_DIGITS:
        raise ValueError(f"Result would have more than {MAX_RESULT_DIGITS} digits.")


def _constant(name: str) -> float:
    if name in _CONSTANTS:
        return _CONSTANTS[name]
    if name in _FUNCTIONS:
        raise ValueError(f"'{name}' is a function; call it like {name}(x).")
    raise ValueError(f"Unknown name '{name}'. Known constants: {', '.join(_CONSTANTS)}.")


def _call(node: ast.Call) -> int | float:
    if not isinstance(node.func, ast.Name):
        raise ValueError(f"Unsupported syntax: {_syntax_name(node.func)}.")
    name = node.func.id
    if name not in _FUNCTIONS:
        raise ValueError(f"Unknown function '{name}'. Known functions: {', '.join(_FUNCTIONS)}.")
    if node.keywords:
        raise ValueError(f"Unsupported syntax: keyword arguments in {name}().")
    args = [_eval(arg) for arg in node.args]
    try:
        result = _FUNCTIONS[name](*args)
    except TypeError as exc:
        raise ValueError(f"Invalid arguments for {name}(): {exc}.") from None
    except ValueError as exc:
        raise ValueError(f"Invalid argument for {name}(): {exc}.") from None
    _check_size(result)
    return result


def _syntax_name(node: ast.AST) -> str:
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp):
        node = node.op
    return _SYNTAX_NAMES.get(type(node), type(node).__name__)
