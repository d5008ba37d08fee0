# %% [markdown]
# # Build 4: simplify, yours
#
# The **lower** stage turns each view of a kernel into index math: the element a load reads or a store writes, as
# an expression over the loop counters (`gidx0`, `ridx0`, ...), and a **valid**, a bool that says where the access
# happens at all (a padded view reads nothing outside its data). It writes that math mechanically, view by view,
# and leaves work in it that never needed doing. The **simplify** stage is given the lowered SINK and gives back
# the same program with its index math simplified: the same values at every loop position, fewer operations.
#
# You write it the way lazynb does: as rewrite rules, each a pattern over UOps and what the match becomes.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Context, pipeline
from lazynb.uop.ops import Ops
from lazynb.shape.shapetracker import expr_str
from lazynb.notebook.build import mine, lowered_graphs, unfolded
from lazynb.notebook.exercise import check
st = pipeline.stage("simplify")
print(f"simplify: takes {st.takes}\n  gives {st.gives}")

# %% [markdown]
# ## What the simplify stage is given
#
# A spy records the stage's input and lazynb's own result. The kernel sums 3x3 windows of a zero-padded 4x4
# image (a convolution with a kernel of ones). Each line is one access: the buffer, the element, and the valid if
# there is one.

# %%
seen = []
def spy_simplify(lowered):
  out = pipeline.reference("simplify")(lowered)
  seen.append((lowered, out))
  return out

with Context(NOOPT=1), pipeline.use("simplify", spy_simplify):
  img = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
  got = Tensor(img).conv2d(Tensor(np.ones((1, 1, 3, 3), np.float32)), padding=1).numpy()
padded = np.pad(img[0, 0], 1)
assert np.allclose(got[0, 0], [[padded[i:i + 3, j:j + 3].sum() for j in range(4)] for i in range(4)])

def accesses(sink):
  for u in sink.toposort():
    if u.op is Ops.INDEX:
      print(f"data{u.src[0].arg}[{expr_str(u.src[1])}]" + (f"  valid: {expr_str(u.src[2])}" if len(u.src) == 3 else ""))
lowered, simplified = seen[0]
print("lowered:")
accesses(lowered)
print("\nsimplified by lazynb:")
accesses(simplified)

# %% [markdown]
# The lowerer starts every sum at `0` and every valid at `True`. The padded image, cut into windows, is read
# through a flat position that is split again with `//` and `%` (even `//1`), and constants are added one after
# another (`-1`, then `+1`). lazynb's simplify knows the loop sizes (`gidx0` runs from 0 to 3), and with them most
# of that folds away: what is left is the address and the four comparisons that make the padding.
#
# ## What to fold
#
# Every UOp knows the smallest and largest value it can take, `u.vmin` and `u.vmax`, computed from the loop sizes
# (a `RANGE` of 4 runs over 0..3; a sum's bounds add up; a comparison is `False..True` unless its sides never
# overlap). The rules that matter on the corpus's kernels, in words:
#
# 1. **An op that changes nothing** gives its other source: adding 0, multiplying by 1, dividing by 1, `&` with
#    `True`. (`x + 0` and `x * 1` with the constant on the right are already folded when the UOp is built; the
#    lowerer's sums start with the constant on the left.)
# 2. **Two constants added one after the other** are one constant: add them first.
# 3. **An op whose value the loop sizes fix** (its `vmin` equals its `vmax`) is that constant: `True & True`, a
#    comparison that is always true or always false, a `//` of a value always below the divisor.
# 4. **A valid that is always True** (once rule 3 made it the constant `True`) is no valid: the `INDEX` keeps only
#    its buffer and element.
# 5. **A `//` or `%` that needs no division.** A `%` of a value always between 0 and `c - 1` is the value itself.
#    A sum whose terms are multiples of `c` plus a rest that stays between 0 and `c - 1`: dividing by `c` keeps
#    only the multiples (each divided by `c`), and `% c` only the rest. Both need the whole value to be `>= 0`
#    (C's `/` rounds toward zero) and the rest's bounds to hold, from its smallest value to its largest.
#
# How often each occurs in the lowered kernels of the corpus (`NOOPT=1`), each with its shortest example:

# %%
pairs = lowered_graphs(pipeline.default_programs())
print(f"{len(pairs)} lowered kernels hold:\n{unfolded(pairs)}")
print("after lazynb's own simplify:", unfolded([(p, pipeline.reference("simplify")(g)) for p, g in pairs]) or "none of them")

# %% [markdown]
# ## The tools
#
# - `UPat(op, dtype, src, name=...)` is a pattern; `UPat.var("x")` matches anything and names it `x`,
#   `UPat.cvar("c")` matches a `CONST`, `UPat.const(dtype, value)` one constant. The operators work on patterns:
#   `UPat.var("x") + UPat.cvar("c")` matches an `ADD` of anything and a constant, **in either order** (for `+`,
#   `*`, `&`, the sources are matched both ways round). `dtype=` limits a pattern to `dtypes.index` (index math) or
#   `dtypes.bool` (valids), so your rules leave the data alone.
# - `PatternMatcher([(pattern, fn), ...])` is a list of rules: `fn` is called with the named matches as keyword
#   arguments and returns the replacement, or `None` to leave the node as it is.
# - `graph_rewrite(sink, matcher)` applies the rules everywhere until none matches: sources first, and every
#   replacement is rewritten again, so small rules combine.
# - `UOp.const(dtype, value)` makes a constant; `x + y`, `x * 3`, `x // 3` build new index math; `u.op`, `u.src`,
#   `u.arg` (a constant's value), `u.vmin`, `u.vmax` read a node.
#
# The check runs the corpus (and a few programs with tricky index math) with your stage in place of lazynb's: the
# values must be lazynb's. A stage that returns its input unchanged passes that, so the check then also looks at
# what your stage gave: none of the five kinds above may be left (lazynb's own result has none). When a rule of
# yours changes a value, the check names the rewrite and a loop position where it is wrong.

# %%
# EXERCISE b04.simplify
from lazynb.uop.ops import UOp, UPat, Ops, GroupOp, PatternMatcher, graph_rewrite
from lazynb.dtype import dtypes

def my_simplify(sink):
  """The lowered SINK -> the same program with its index math simplified (graph_rewrite with your rules)."""
  raise NotImplementedError  # YOUR CODE

# %%
check("b04.simplify", my_simplify)

# %% [markdown]
# ## Your simplify, running the course
#
# With `simplify` kept, every kernel below is simplified by your rules (and rendered, compiled and loaded by your
# stages from Builds 1 and 2, if they are kept). A padded convolution, a relu and a max-pool: index math with
# padding, windows and strides. In the view, the Kernels tab shows each kernel's code.

# %%
%%tinygrad
rng = np.random.default_rng(0)
x, w = rng.standard_normal((2, 3, 6, 6)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
with mine() as yours:
  y = Tensor(x).conv2d(Tensor(w), padding=1).relu().max_pool2d(2).numpy()
windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
want = np.maximum(np.einsum("bchwij,ocij->bohw", windows, w), 0).reshape(2, 4, 3, 2, 3, 2).max(axis=(3, 5))
assert np.allclose(y, want, atol=1e-4)
print("your stages:", ", ".join(yours) or "none yet")

# %% [markdown]
# Your rules run on every kernel now: the matmuls, the reductions and the convolutions. They are a small part of
# lazynb's own (`lazynb/uop/symbolic.py` also distributes products over sums, folds like terms and splits divisions
# whose rest can reach the divisor), and they are the part that matters for the kernels the course makes here.
