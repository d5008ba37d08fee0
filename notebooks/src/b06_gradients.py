# %% [markdown]
# # Build 6: the gradient rules, yours
#
# Part 6 showed that `backward()` computes nothing: it walks the graph from the loss back to the parameters and, for
# each node, asks a **rule** how the gradient of the node's output flows to each of its inputs. The rules are
# pattern-matcher rules over UOps (lazynb's are `lazynb.gradient.pm_gradient`), and what they build is a graph too,
# scheduled and fused with the rest. Here you write the rules.
#
# `gradient_rules(pm)` puts your `PatternMatcher` in front of lazynb's for every `backward()` inside a `with` block:
# an op your rules do not cover still gets lazynb's rule. The check makes sure that yours, not lazynb's, gave the
# gradient of every op it asks for. When it passes, your rules are kept, and the capstone trains with them.

# %%
%load_ext lazynb
import contextlib
import numpy as np
from lazynb import Tensor
from lazynb.uop.ops import UPat, PatternMatcher, Ops
from lazynb.gradient import gradient_rules, pm_gradient
from lazynb.notebook.exercise import check
print(f"lazynb's gradient rules: {len(pm_gradient.patterns)}")

# %% [markdown]
# ## The form of a rule
#
# A rule is a pair `(UPat(op, name="ret"), function)`. The function gets `ctx`, the gradient of the loss with respect to
# the node's output (a UOp of the node's shape), and `ret`, the node itself (its inputs are `ret.src`). It returns a
# tuple with one entry per input: that input's gradient, or `None` where no gradient flows. The rule for negation,
# $\partial(-a)/\partial a = -1$, is one line:
#
# ```python
# (UPat(Ops.NEG), lambda ctx: (-ctx,))
# ```
#
# Try it: a matcher with that one rule, in front of lazynb's. Through the spy below you can see it fire.

# %%
fired = []
def neg_rule(ctx):
  fired.append(ctx.shape)
  return (-ctx,)

x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
with gradient_rules(PatternMatcher([(UPat(Ops.NEG), neg_rule)])):
  (-x * Tensor([1.0, 10.0, 100.0])).sum().backward()
print("your NEG rule ran for shapes", fired, "-> x.grad =", x.grad.numpy())
assert fired and np.allclose(x.grad.numpy(), [-1, -10, -100])

# %% [markdown]
# ## What a rule can build
#
# `ctx`, `ret` and `ret.src[i]` are UOps; their methods build the gradient's graph:
#
# | you write | it means |
# |---|---|
# | `ctx * u`, `ctx + u`, `-ctx`, `ctx * 0.5` | elementwise arithmetic (a Python number becomes a constant) |
# | `u.alu(Ops.RECIP)` | 1/u |
# | `a.alu(Ops.CMPLT, b)`, `a.ne(b)` | a < b, a != b (bools); `a.ne(b).ne(True)` is a == b |
# | `cond.where(a, b)` | a where cond is true, else b |
# | `u.const_like(0.0)` | a constant with u's dtype and shape |
# | `ctx.expand(shape)`, `ctx.r(Ops.ADD, axes)` | broadcast to `shape`; sum over the axes in the tuple `axes` (keeping them, as size 1) |
# | `u.shape`, `ret.arg` | the shape; the node's argument (for `REDUCE_AXIS`, `(op, axes)`: the reduce op and the axes reduced) |
#
# The ops to write rules for, and what lazynb builds them from:
#
# - `ADD` (a + b) and `MUL` (a * b), with the usual derivatives;
# - `RECIP` (1/a): $-1/a^2$, which is $-\,\mathrm{ret}^2$: reuse the node's own value;
# - `EXP2` ($2^a$) and `LOG2` ($\log_2 a$): lazynb's `exp` and `log` are built from these, so mind the factor
#   $\ln 2$ (`math.log(2)`);
# - `SQRT`: $1/(2\sqrt a)$, again the node's own value;
# - `MAX` (elementwise maximum of a and b): the gradient goes to the larger input; where they are **equal**, each gets
#   half (as in torch and tinygrad);
# - `REDUCE_AXIS`: a sum copies the gradient back to every element it summed (its input's shape). A rule that cannot
#   handle the node returns `None` instead of a tuple: do that for reductions other than a sum (max, product), and
#   lazynb's rule takes over;
# - `EXPAND` (broadcasting a size-1 axis): the opposite of a sum, so its gradient is a sum over the axes that were
#   expanded (compare the input's shape with the output's).

# %%
# EXERCISE b06.gradients
import math
from lazynb.uop.ops import UPat, PatternMatcher, Ops

def my_gradient_rules():
  """A PatternMatcher with a rule for ADD, MUL, RECIP, EXP2, LOG2, SQRT, MAX, REDUCE_AXIS (sums) and EXPAND."""
  raise NotImplementedError  # YOUR CODE: return PatternMatcher([(UPat(Ops.ADD), lambda ctx: ...), ...])

# %%
check("b06.gradients", my_gradient_rules)

# %% [markdown]
# ## Your rules, training
#
# A passing set of rules is kept (`my_compiler/gradient.py`). Below, a two-layer network's gradients come from your
# rules, under `gradient_rules`, and are compared with lazynb's. The Rewrites tab of the view shows the `gradient` pass:
# one step per rule that fired, yours among them. (Before your rules pass, lazynb's own are used.)

# %%
%%tinygrad
from lazynb.notebook.build import kept_pieces
from lazynb.nn import Linear
yours = kept_pieces().get("gradient")
print("gradient rules:", "yours first, then lazynb's" if yours else "lazynb's (yours are not kept yet)")
rng = np.random.default_rng(0)
xb, yb = rng.standard_normal((16, 8)).astype(np.float32), rng.integers(0, 3, 16).astype(np.int32)

def grads(rules):
  Tensor.manual_seed(1)
  l1, l2 = Linear(8, 16), Linear(16, 3)
  for p in (l1.weight, l1.bias, l2.weight, l2.bias): p.requires_grad = True
  with gradient_rules(rules) if rules is not None else contextlib.nullcontext():
    l2(l1(Tensor(xb)).relu()).sparse_categorical_crossentropy(Tensor(yb)).backward()
  return [p.grad.numpy() for p in (l1.weight, l1.bias, l2.weight, l2.bias)]

mine, theirs = grads(yours() if yours else None), grads(None)
print("largest difference from lazynb's gradients:", max(float(np.abs(a - b).max()) for a, b in zip(mine, theirs)))
assert all(np.allclose(a, b, rtol=1e-4, atol=1e-6) for a, b in zip(mine, theirs))
