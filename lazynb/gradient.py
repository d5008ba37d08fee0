"""Reverse-mode autodiff as graph rewriting: one rule per op says how the gradient of its output (`ctx`) flows to each
of its sources. Gradients are UOp graphs like any other, so they stay lazy, get scheduled and fused like the forward
pass, and show up in the notebook's views.

Each rule returns one entry per source: a gradient UOp, or None for "no gradient flows there". A composite Tensor method
may give its output a rule of its own (`custom_gradient`, kept in `state.custom_grads`): conv2d does, so that its input
gradient is a transposed convolution instead of the gradient of its window views."""
from __future__ import annotations
import contextlib, contextvars, dataclasses, math
from typing import Callable, Iterator
from lazynb.dtype import dtypes
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, report_pass, tracking_rewrites, all_metadata
from lazynb.helpers import postorder, unwrap
from lazynb.runstate import state

def _reduce_grad(ctx: UOp, ret: UOp) -> tuple:
  op, axes = ret.arg
  x = ret.src[0]
  if op is Ops.ADD: return (ctx.expand(x.shape),)
  if op is Ops.MAX:  # split the gradient evenly between the tied maxima
    is_max = x.ne(ret.expand(x.shape)).ne(True)
    mask, acc = is_max.where(x.const_like(1.0), x.const_like(0.0)), _acc(x.dtype)
    count = mask.cast(acc).r(Ops.ADD, axes)  # (in float32 for half: a half sum of ones stops at 2048)
    return ((mask * (ctx.cast(acc) * count.alu(Ops.RECIP)).cast(x.dtype).expand(x.shape)),)
  if op is Ops.MUL:  # d(prod)/dx_i = product of the others; written without dividing by a zero x_i
    zero = x.ne(0).ne(True)
    one = x.const_like(1.0)
    nz = zero.where(one, x)
    prod_nz = nz.r(Ops.MUL, axes).expand(x.shape)
    zeros = zero.where(one, x.const_like(0.0)).r(Ops.ADD, axes).expand(x.shape)
    others = zeros.ne(0).where(zero.where(zeros.ne(1).where(x.const_like(0.0), prod_nz), x.const_like(0.0)), prod_nz * nz.alu(Ops.RECIP))
    return (others * ctx.expand(x.shape),)
  raise NotImplementedError(f"no gradient for reduce {op}")

def _expand_grad(ctx: UOp, ret: UOp) -> tuple:
  src = ret.src[0]
  axes = tuple(i for i, (a, b) in enumerate(zip(unwrap(src.shape), unwrap(ret.shape))) if a != b)
  return (ctx.cast(_acc(ctx.dtype)).r(Ops.ADD, axes).cast(ctx.dtype),)

def _cos(x: UOp) -> UOp:
  """cos x = 1 - 2 sin(x/2)^2 (x/2 is exact; pi/2 - x would round away the digits of a large x)."""
  s = (x * x.const_like(0.5)).alu(Ops.SIN)
  return x.const_like(1.0) - s * s * x.const_like(2.0)

def _acc(d): return dtypes.float32 if d in (dtypes.float16, dtypes.bfloat16) else d

def _max_grad(ctx: UOp, ret: UOp) -> tuple:
  a, b = ret.src
  gt, eq = b.alu(Ops.CMPLT, a), a.ne(b).ne(True)
  half = ctx * ctx.const_like(0.5)
  return (gt.where(ctx, eq.where(half, ctx.const_like(0))), gt.where(ctx.const_like(0), eq.where(half, ctx)))

pm_gradient = PatternMatcher([
  (UPat(Ops.CAST, name="ret"), lambda ctx, ret: (ctx.cast(ret.src[0].dtype) if dtypes.is_float(ret.src[0].dtype) else None,)),
  (UPat(Ops.RECIP, name="ret"), lambda ctx, ret: (-ctx * ret * ret,)),
  (UPat(Ops.SIN, name="ret"), lambda ctx, ret: (_cos(ret.src[0]) * ctx,)),
  (UPat(Ops.LOG2, name="ret"), lambda ctx, ret: (ctx * (ret.src[0] * math.log(2)).alu(Ops.RECIP),)),
  (UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ret * ctx * math.log(2),)),
  (UPat(Ops.SQRT, name="ret"), lambda ctx, ret: (ctx * (ret * 2).alu(Ops.RECIP),)),
  (UPat(Ops.NEG), lambda ctx: (-ctx,)),
  (UPat(Ops.ADD), lambda ctx: (ctx, ctx)),
  (UPat(Ops.MUL, name="ret"), lambda ctx, ret: (ret.src[1] * ctx, ret.src[0] * ctx)),
  (UPat(Ops.MAX, name="ret"), _max_grad),
  (UPat(Ops.WHERE, name="ret"), lambda ctx, ret: (None, ret.src[0].where(ctx, ctx.const_like(0)), ret.src[0].where(ctx.const_like(0), ctx))),
  (UPat(Ops.REDUCE_AXIS, name="ret"), _reduce_grad),
  (UPat((Ops.CONTIGUOUS, Ops.COPY), name="ret"),
   lambda ctx, ret: (ctx if ret.op is Ops.CONTIGUOUS or ctx.device == ret.src[0].device else
                     UOp(Ops.COPY, ctx.dtype, (ctx, UOp(Ops.DEVICE, dtypes.void, (), ret.src[0].device))), None)[:len(ret.src)]),
  (UPat(Ops.RESHAPE, name="ret"), lambda ctx, ret: (ctx.reshape(ret.src[0].shape),)),
  (UPat(Ops.PERMUTE, name="ret"), lambda ctx, ret: (ctx.permute(tuple(sorted(range(len(ret.arg)), key=ret.arg.__getitem__))),)),
  (UPat(Ops.EXPAND, name="ret"), _expand_grad),
  (UPat(Ops.PAD, name="ret"), lambda ctx, ret: (ctx.shrink(tuple((b, b + s) for (b, _), s in zip(ret.arg, ret.src[0].shape))),)),
  (UPat(Ops.SHRINK, name="ret"), lambda ctx, ret: (ctx.pad(tuple((b, s - e) for (b, e), s in zip(ret.arg, ret.src[0].shape))),)),
  (UPat(Ops.FLIP, name="ret"), lambda ctx, ret: (ctx.flip(ret.arg),)),
  # no gradient flows through these
  # float mod (fmod): x - trunc(x/y)*y
  (UPat(Ops.MOD, dtype=(dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64), name="ret"),
   lambda ctx, ret: (ctx, ctx * -UOp(Ops.TRUNC, ret.dtype, (ret.src[0] * UOp(Ops.RECIP, ret.dtype, (ret.src[1],)),)))),
  (UPat({Ops.DETACH, Ops.TRUNC, Ops.BITCAST} | GroupOp.Comparison | {Ops.IDIV, Ops.MOD, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR},
        name="ret"), lambda ret: (None,) * len(ret.src))])

# rules of your own, tried before pm_gradient (the build track's gradient exercise): per thread, for a `with` block
_rules: contextvars.ContextVar[PatternMatcher | None] = contextvars.ContextVar("lazynb_gradient_rules", default=None)

@contextlib.contextmanager
def gradient_rules(pm: PatternMatcher) -> Iterator[None]:
  """`with gradient_rules(pm): loss.backward()`: pm's rules come first; an op they do not match (or a rule that returns
  None) falls through to lazynb's own. Holds for this thread, until the block ends (also on an error)."""
  if not isinstance(pm, PatternMatcher): raise TypeError(f"gradient_rules takes a PatternMatcher of (UPat, rule) pairs, got {type(pm).__name__}")
  token = _rules.set(pm + pm_gradient)
  try: yield
  finally: _rules.reset(token)

class CustomGradient:
  """A composite op's own gradient rule. `inputs`: the UOps its output was built from. `backward(grad, inputs,
  wanted)`: the gradient of each input given the output's (None where `wanted[i]` is False: nothing is built for an
  input that leads to no target), computed from `inputs` as given (a rebuilt graph passes its own nodes).
  compute_gradient then skips the nodes between the output and its inputs."""
  __slots__ = ("name", "inputs", "backward")
  def __init__(self, name: str, inputs: tuple[UOp, ...], backward: Callable[[UOp, tuple[UOp, ...], tuple[bool, ...]], tuple[UOp | None, ...]]):
    self.name, self.inputs, self.backward = name, tuple(inputs), backward
  def __repr__(self) -> str: return f"custom gradient: {self.name}"

def custom_gradient(out: UOp, name: str, inputs: tuple[UOp, ...], backward: Callable) -> UOp:
  """Give `out` its own gradient rule (kept by `state.custom_grads`, weakly: it goes with the node). `backward` must
  not refer to `out` itself, or the node could never be freed; nor hold a Tensor (it would stay a live lazy value, which
  realize() and a TinyJit capture then compute as a kernel of its own): it holds the Tensor class and UOps instead."""
  for var, cell in zip(backward.__code__.co_freevars, backward.__closure__ or ()):
    if any(c.__name__ == "Tensor" and c.__module__ == "lazynb.tensor" for c in type(cell.cell_contents).__mro__):  # (no import up)
      raise TypeError(f"the {name} gradient rule holds the tensor {var!r}: hold type({var}) or {var}.uop instead (a tensor kept "
                      "alive by its rule stays a live lazy value)")
  state.custom_grads[out] = CustomGradient(name, inputs, backward)
  return out

def keep_rules(memo: dict[UOp, UOp], put: set[UOp]) -> None:
  """Each node rebuilt (memo: old -> new; not the nodes put in place of others) keeps its custom rule, over the rebuilt
  inputs. backward() puts expressions back in place of realized buffers: every node above them is new, and without this
  a conv above a realized input would lose its rule."""
  for n, new in memo.items():
    if new is not n and n not in put and (rule := state.custom_grads.get(n)) is not None:
      state.custom_grads[new] = CustomGradient(rule.name, tuple(memo.get(i, i) for i in rule.inputs), rule.backward)

def _usable_rule(n: UOp, targets: set[UOp]) -> CustomGradient | None:
  """n's custom rule, unless a target lies strictly inside it (then only the plain graph gives that target a gradient)."""
  if (rule := state.custom_grads.get(n)) is None: return None
  stop = set(rule.inputs)
  inside = postorder([n], lambda u: () if u in stop else u.src)
  return None if any(u is not n and u not in stop and u in targets for u in inside) else rule

def _toposort(root: UOp, targets: set[UOp]) -> tuple[list[UOp], dict[UOp, tuple[UOp, ...]], dict[UOp, CustomGradient]]:
  """The graph in order, sources first, where a node with a custom rule has the rule's inputs as its sources."""
  srcs: dict[UOp, tuple[UOp, ...]] = {}
  rules: dict[UOp, CustomGradient] = {}
  def sources(n: UOp) -> tuple[UOp, ...]:
    if (rule := _usable_rule(n, targets) if state.custom_grads else None) is not None: rules[n] = rule
    srcs[n] = rule.inputs if rule is not None else n.src
    return srcs[n]
  return postorder([root], sources), srcs, rules

def compute_gradient(root: UOp, root_grad: UOp, targets: set[UOp]) -> dict[UOp, UOp]:
  """d(root)/d(t) for each t in targets, given d(loss)/d(root) = root_grad."""
  topo, srcs, rules = _toposort(root, targets)
  leads, grads = dict[UOp, bool](), {root: root_grad}
  for n in topo: leads[n] = n in targets or n.op is not Ops.DETACH and any(leads[s] for s in srcs[n])  # (nothing flows back through a detach)
  track, steps = tracking_rewrites(), []
  rules_pm = _rules.get() or pm_gradient
  why: CustomGradient | UPat
  for n in reversed(topo):
    if n not in grads or not leads[n] or not srcs[n]: continue
    if n in targets and not any(leads[s] for s in srcs[n]): continue
    if n in rules:  # the composite's own rule; the nodes inside it are never visited
      out, why = rules[n].backward(grads[n], rules[n].inputs, tuple(leads[s] for s in srcs[n])), rules[n]
    elif (r := rules_pm.rewrite_with_pattern(n, ctx=grads[n])) is None:  # (tinygrad refuses to assign a value that needs a gradient)
      raise NotImplementedError("no gradient goes through assign(), an in-place write, and this one wrote a value computed from a tensor that requires grad: build the result out of place (no assign), or assign x.detach()" if n.op is Ops.ASSIGN else f"no gradient rule for {n.op}")
    else: out, why = r
    if not isinstance(out, tuple) or len(out) != len(srcs[n]):  # zip would drop a missing gradient without a word
      raise ValueError(f"the gradient rule for {n.op} ({why}) must return a tuple with one gradient (or None) per source: "
                       f"{n.op} has {len(srcs[n])}, the rule gave {out!r:.200}")
    if track: steps.append((n, UOp.sink(*[g for g in out if g is not None]), why))
    for s, g in zip(srcs[n], out):
      if g is None or not leads[s]: continue
      if g.shape != s.shape:  # a gradient of another shape would broadcast into a plausible, wrong number
        raise ValueError(f"the gradient rule for {n.op} ({why}) gave a gradient of shape {g.shape} to a source of shape {s.shape}")
      grads[s] = grads[s] + g if s in grads else g
      if (md := n.metadata) is not None and grads[s] not in all_metadata: all_metadata[grads[s]] = dataclasses.replace(md, backward=True)
  ret = {t: grads[t] for t in targets if t in grads}
  # shown with the tensor-graph passes: the loss's graph before, the gradients' graphs after, one step per rule that fired
  if track: report_pass("gradient", root, UOp.sink(*ret.values()), steps, stage="tensor graph")
  return ret
