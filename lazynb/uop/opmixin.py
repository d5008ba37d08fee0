"""Python's operators, written once for the three classes that spell arithmetic with them: `UOp` (a graph node), `UPat`
(a pattern over nodes) and `Tensor`. Each dunder calls a named operator (`a - b` is `a.sub(b)`, `2 - a` is
`a.sub(2, reverse=True)`), and each named operator is built from the hooks below, so a class says only how it makes
one node, never which operator means which op.

Hooks a class supplies:
  _binop(op, x, reverse=False)  the binary `Ops` op of self and x (a value of self's kind or a Python number);
                                reverse: x is the left operand. Broadcasting, dtype promotion, UOp's `x+0 -> x`
                                shortcut, UPat's commutative matching and Tensor's dtype checks live here.
  _unary(op)                    the unary `Ops` op of self
  _lift(x)                      x as a value of self's kind (used by the default `sub` and `div` only)
  _negate(x)                    the right operand of a subtraction, negated (default: -_lift(x))
A class whose `==` builds a value (Tensor) says so with `class C(OpMixin, elementwise_eq=True)`; the others keep
Python's identity `==` and hashing (UOps are hash-consed, UPats are dict keys)."""
from __future__ import annotations
from typing import Any, TYPE_CHECKING
from lazynb.dtype import DType, dtypes
from lazynb.uop.opcodes import Ops
if TYPE_CHECKING: from typing_extensions import Self  # (typing.Self is Python 3.11)

class OpMixin:
  __slots__ = ()
  def __init_subclass__(cls, elementwise_eq: bool = False, **kw):
    super().__init_subclass__(**kw)
    # assigned after the class body, so the class keeps the __hash__ it defines (mypy reports any assignment to a method)
    if elementwise_eq:
      cls.__eq__ = _eq_op  # type: ignore[method-assign]
      cls.__ne__ = _ne_op  # type: ignore[method-assign]

  # ---- the hooks
  def _binop(self, op: Ops, x: Any, reverse: bool = False) -> Self: raise NotImplementedError(f"{type(self).__name__} has no _binop")
  def _unary(self, op: Ops) -> Self: raise NotImplementedError(f"{type(self).__name__} has no _unary")
  def _lift(self, x: Any) -> Self: raise NotImplementedError(f"{type(self).__name__} has no _lift")
  def _negate(self, x: Any) -> Self: return self._lift(x).neg()
  def _is_bool(self) -> bool: return getattr(self, "dtype", None) is dtypes.bool  # (a UPat's dtype is a set of dtypes, or None)

  # ---- named operators
  def add(self, x, reverse: bool = False) -> Self: return self._binop(Ops.ADD, x, reverse)
  def mul(self, x, reverse: bool = False) -> Self: return self._binop(Ops.MUL, x, reverse)
  def sub(self, x, reverse: bool = False) -> Self:
    """a - b is a + (-b): there is no SUB op."""
    return self._lift(x).add(self.neg()) if reverse else self.add(self._negate(x))
  def div(self, x, reverse: bool = False) -> Self:
    """a / b is a * (1/b), for floats: an int value needs // (or a class's own div, as Tensor's casts to float)."""
    if isinstance(dt := getattr(self, "dtype", None), DType) and not dtypes.is_float(dt): raise TypeError(f"/ needs a float value, got {dt}: use //")
    a, b = (self._lift(x), self) if reverse else (self, self._lift(x))
    return a.mul(b._unary(Ops.RECIP))
  def floordiv(self, x, reverse: bool = False) -> Self: return self._binop(Ops.IDIV, x, reverse)
  def mod(self, x, reverse: bool = False) -> Self: return self._binop(Ops.MOD, x, reverse)
  def neg(self) -> Self: return self.bitwise_xor(True) if self._is_bool() else self._unary(Ops.NEG)
  def ne(self, x) -> Self: return self._binop(Ops.CMPNE, x)
  def eq(self, x) -> Self: return self.ne(x).bitwise_xor(True)
  def maximum(self, x) -> Self: return self._binop(Ops.MAX, x)
  def bitwise_and(self, x, reverse: bool = False) -> Self: return self._binop(Ops.AND, x, reverse)
  def bitwise_or(self, x, reverse: bool = False) -> Self: return self._binop(Ops.OR, x, reverse)
  def bitwise_xor(self, x, reverse: bool = False) -> Self: return self._binop(Ops.XOR, x, reverse)
  def lshift(self, x, reverse: bool = False) -> Self: return self._binop(Ops.SHL, x, reverse)
  def rshift(self, x, reverse: bool = False) -> Self: return self._binop(Ops.SHR, x, reverse)

  # ---- Python's operators, each one named operator
  def __add__(self, x) -> Self: return self.add(x)
  def __radd__(self, x) -> Self: return self.add(x, True)
  def __sub__(self, x) -> Self: return self.sub(x)
  def __rsub__(self, x) -> Self: return self.sub(x, True)
  def __mul__(self, x) -> Self: return self.mul(x)
  def __rmul__(self, x) -> Self: return self.mul(x, True)
  def __truediv__(self, x) -> Self: return self.div(x)
  def __rtruediv__(self, x) -> Self: return self.div(x, True)
  def __floordiv__(self, x) -> Self: return self.floordiv(x)
  def __rfloordiv__(self, x) -> Self: return self.floordiv(x, True)
  def __mod__(self, x) -> Self: return self.mod(x)
  def __rmod__(self, x) -> Self: return self.mod(x, True)
  def __neg__(self) -> Self: return self.neg()
  def __and__(self, x) -> Self: return self.bitwise_and(x)
  def __rand__(self, x) -> Self: return self.bitwise_and(x, True)
  def __or__(self, x) -> Self: return self.bitwise_or(x)
  def __ror__(self, x) -> Self: return self.bitwise_or(x, True)
  def __xor__(self, x) -> Self: return self.bitwise_xor(x)
  def __rxor__(self, x) -> Self: return self.bitwise_xor(x, True)
  def __lshift__(self, x) -> Self: return self.lshift(x)
  def __rlshift__(self, x) -> Self: return self.lshift(x, True)
  def __rshift__(self, x) -> Self: return self.rshift(x)
  def __rrshift__(self, x) -> Self: return self.rshift(x, True)
  # comparisons: only < and != are ops; Python tries the reflected method when the left side is a number (3 < a is a > 3)
  def __lt__(self, x) -> Self: return self._binop(Ops.CMPLT, x)
  def __gt__(self, x) -> Self: return self._binop(Ops.CMPLT, x, True)
  def __le__(self, x) -> Self: return (self < x) | self.eq(x)
  def __ge__(self, x) -> Self: return (self > x) | self.eq(x)

def _eq_op(self, x): return self.eq(x)
def _ne_op(self, x): return self.ne(x)

_HOOKS = ("_binop", "_unary", "_lift", "_negate", "_is_bool", "__init_subclass__")
# the operators every class gets from OpMixin (tests check that no class writes its own copy of one)
OPERATORS = tuple(n for n, v in vars(OpMixin).items() if callable(v) and n not in _HOOKS)
