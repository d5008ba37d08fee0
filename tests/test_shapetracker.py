"""ShapeTracker and View: movement ops as index math.

The central check: apply a chain of movement ops to a numpy array of flat positions and to a ShapeTracker,
then evaluate the tracker's (index, valid) expressions at every output position. Where valid they must name
the same flat position numpy holds; where numpy holds padding they must be invalid. Everything here runs
in pure Python (no kernels compiled), so it is cheap to check many chains.
"""
import itertools, random
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.shape import ShapeTracker, View
from lazynb.uop import UOp, Ops
from lazynb.uop.ops import graph_rewrite
from lazynb.uop.symbolic import symbolic
from lazynb.dtype import dtypes

PAD = -1  # numpy stand-in for "no element here" (positions are >= 0)
MOVE_OPS = {"reshape": Ops.RESHAPE, "permute": Ops.PERMUTE, "expand": Ops.EXPAND, "pad": Ops.PAD, "shrink": Ops.SHRINK, "flip": Ops.FLIP}

# ---------------------------------------------------------------- evaluating index expressions

def c_div(a, b):
  """Integer division as C (and the kernels) do it: truncate toward zero."""
  a, b = np.asarray(a), np.asarray(b)
  q = np.abs(a) // np.abs(b)
  return np.where((a < 0) != (b < 0), -q, q)

def eval_uop(u: UOp, env: dict, memo=None):
  """Evaluate an index/valid expression on numpy arrays of index values, with C semantics."""
  if memo is None: memo = {}
  if u in memo: return memo[u]
  op = u.op
  if op is Ops.CONST: r = u.arg
  elif op is Ops.SPECIAL: r = env[u.arg[0]]
  elif op is Ops.RANGE: r = env[u.arg[2]]
  else:
    s = [eval_uop(x, env, memo) for x in u.src]
    if op is Ops.ADD: r = (np.logical_or(s[0], s[1]) if u.dtype is dtypes.bool else np.add(s[0], s[1]))
    elif op is Ops.MUL: r = (np.logical_and(s[0], s[1]) if u.dtype is dtypes.bool else np.multiply(s[0], s[1]))
    elif op is Ops.IDIV: r = c_div(s[0], s[1])
    elif op is Ops.MOD: r = np.asarray(s[0]) - np.asarray(s[1]) * c_div(s[0], s[1])
    elif op is Ops.NEG: r = np.negative(s[0])
    elif op is Ops.CMPLT: r = np.less(s[0], s[1])
    elif op is Ops.CMPNE: r = np.not_equal(s[0], s[1])
    elif op is Ops.AND: r = np.logical_and(s[0], s[1]) if u.dtype is dtypes.bool else np.bitwise_and(s[0], s[1])
    elif op is Ops.OR: r = np.logical_or(s[0], s[1]) if u.dtype is dtypes.bool else np.bitwise_or(s[0], s[1])
    elif op is Ops.XOR: r = np.logical_xor(s[0], s[1]) if u.dtype is dtypes.bool else np.bitwise_xor(s[0], s[1])
    elif op is Ops.MAX: r = np.maximum(s[0], s[1])
    elif op is Ops.WHERE: r = np.where(s[0], s[1], s[2])
    else: raise NotImplementedError(f"eval_uop: {op}")
  memo[u] = r
  return r

def st_positions(st: ShapeTracker, simplify: bool) -> np.ndarray:
  """For every output index of `st`: the flat buffer position, or PAD where invalid."""
  names = [f"i{d}" for d in range(len(st.shape))]
  idxs = [UOp(Ops.SPECIAL, dtypes.int, (), (n, s)) for n, s in zip(names, st.shape)]
  idx, valid = st.to_indexed_uops(idxs)
  if simplify: idx, valid = graph_rewrite(UOp.sink(idx, valid), symbolic).src
  env = dict(zip(names, np.indices(st.shape))) if st.shape else {}
  iv = np.broadcast_to(eval_uop(idx, env), st.shape)
  vv = np.broadcast_to(eval_uop(valid, env), st.shape).astype(bool)
  return np.where(vv, iv, PAD)

def np_move(a: np.ndarray, kind: str, arg) -> np.ndarray:
  if kind == "reshape": return a.reshape(arg)
  if kind == "permute": return a.transpose(arg)
  if kind == "expand": return np.broadcast_to(a, arg)
  if kind == "pad": return np.pad(a, arg, constant_values=PAD)
  if kind == "shrink": return a[tuple(slice(b, e) for b, e in arg)]
  if kind == "flip": return a[tuple(slice(None, None, -1) if f else slice(None) for f in arg)]
  raise ValueError(kind)

def apply_chain(shape, chain):
  """(numpy positions, ShapeTracker) after the chain of (kind, arg) movement ops."""
  a = np.arange(int(np.prod(shape))).reshape(shape)
  st = ShapeTracker.from_shape(shape)
  for kind, arg in chain:
    a = np_move(a, kind, arg)
    st = st.movement(MOVE_OPS[kind], arg)
    assert st.shape == a.shape, f"shape after {kind}{arg}: tracker {st.shape}, numpy {a.shape}"
  return a, st

def random_move(rng: random.Random, shape):
  kind = rng.choice(list(MOVE_OPS))
  if kind == "permute":
    order = list(range(len(shape))); rng.shuffle(order)  # noqa: E702
    return kind, tuple(order)
  if kind == "flip": return kind, tuple(rng.random() < 0.5 for _ in shape)
  if kind == "pad": return kind, tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in shape)
  if kind == "shrink":
    arg = []
    for s in shape:
      b = rng.randint(0, s - 1)
      arg.append((b, rng.randint(b + 1, s)))
    return kind, tuple(arg)
  if kind == "expand":
    if 1 not in shape: return "reshape", tuple(shape[:1]) + (1,) + tuple(shape[1:])
    return kind, tuple(rng.randint(2, 3) if s == 1 else s for s in shape)
  # reshape: a random factorisation of the size, sometimes with a 1 inserted
  n, dims = int(np.prod(shape)), []
  while n > 1 and len(dims) < 4:
    d = rng.choice([d for d in range(2, n + 1) if n % d == 0])
    dims.append(d); n //= d  # noqa: E702
  if n > 1: dims.append(n)
  if rng.random() < 0.3: dims.insert(rng.randint(0, len(dims)), 1)
  return "reshape", tuple(dims) or (1,)

def random_chain(rng: random.Random):
  shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
  chain, cur = [], np.zeros(shape)
  for _ in range(rng.randint(1, 6)):
    kind, arg = random_move(rng, cur.shape)
    chain.append((kind, arg))
    cur = np_move(cur, kind, arg)
  return shape, chain

def chain_mismatches(cases, simplify: bool) -> list:
  bad = []
  for shape, chain in cases:
    ref, st = apply_chain(shape, chain)
    got = st_positions(st, simplify)
    if not np.array_equal(got, ref): bad.append((shape, chain, st))
  return bad

# ---------------------------------------------------------------- View fields

def test_view_create_contiguous():
  v = View.create((4, 8))
  assert v.strides == (8, 1) and v.offset == 0 and v.mask is None and v.contiguous
  assert View.create((4, 1, 8)).strides == (8, 0, 1)  # size-1 dims get stride 0
  assert View.create((3, 5)).size == 15

def test_view_permute():
  v = View.create((4, 8)).permute((1, 0))
  assert v.shape == (8, 4) and v.strides == (1, 8) and not v.contiguous

def test_view_expand_is_stride_zero():
  v = View.create((4, 1)).expand((4, 6))
  assert v.shape == (4, 6) and v.strides == (1, 0) and v.offset == 0

def test_view_shrink_moves_offset():
  v = View.create((4, 8)).shrink(((1, 3), (2, 6)))
  assert v.shape == (2, 4) and v.strides == (8, 1) and v.offset == 1 * 8 + 2 and v.mask is None

def test_view_pad_records_mask():
  v = View.create((4, 8)).pad(((1, 1), (2, 0)))
  assert v.shape == (6, 10)
  assert v.mask == ((1, 5), (2, 10))
  assert v.offset == -(1 * 8 + 2 * 1)
  assert not v.contiguous
  assert View.create((4, 8)).pad(((0, 0), (0, 0))) == View.create((4, 8))

def test_view_flip_negates_stride():
  v = View.create((4, 8)).flip((True, False))
  assert v.strides == (-8, 1) and v.offset == 3 * 8

def test_view_pad_then_shrink_inside_drops_mask():
  v = View.create((4,)).pad(((2, 2),)).shrink(((2, 6),))
  assert v.mask is None and v.shape == (4,) and v.offset == 0

def test_view_shrink_into_padding_is_all_invalid():
  v = View.create((4,)).pad(((3, 0),)).shrink(((0, 2),))
  st = ShapeTracker((v,))
  assert (st_positions(st, simplify=False) == PAD).all()

def test_view_reshape_contiguous():
  v = View.create((4, 8)).reshape((2, 16))
  assert v is not None and v.contiguous and v.strides == (16, 1)

def test_view_reshape_permuted_merge_fails():
  """(8,4) with strides (1,8) is not one strided run, so it cannot become (32,) in one view."""
  assert View.create((4, 8)).permute((1, 0)).reshape((32,)) is None

def test_view_reshape_permuted_split_works():
  """Splitting one dim is always expressible: (8,4) strides (1,8) -> (2,4,4) strides (4,1,8)."""
  v = View.create((4, 8)).permute((1, 0)).reshape((2, 4, 4))
  assert v is not None and v.strides == (4, 1, 8)

def test_view_reshape_size_mismatch_raises():
  with pytest.raises(ValueError):
    View.create((4, 8)).reshape((5, 6))

def test_view_minify_merges_runs():
  v = View.create((2, 3, 4)).minify()
  assert v.shape == (24,) and v.strides == (1,)

# ---------------------------------------------------------------- ShapeTracker: merging vs stacking

def test_from_shape_is_contiguous():
  st = ShapeTracker.from_shape((4, 8))
  assert st.contiguous and len(st.views) == 1 and st.shape == (4, 8) and st.size == 32 and not st.has_mask

def test_reshape_after_permute_stacks_a_view():
  st = ShapeTracker.from_shape((4, 8)).permute((1, 0)).reshape((32,))
  assert len(st.views) == 2
  assert st.views[-1].shape == (32,) and st.views[0].shape == (8, 4)

def test_reshape_of_contiguous_stays_single_view():
  st = ShapeTracker.from_shape((4, 8)).reshape((2, 2, 8)).reshape((32,)).reshape((8, 4))
  assert len(st.views) == 1 and st.contiguous

@pytest.mark.parametrize("chain", [
  [("permute", (1, 0)), ("permute", (1, 0))],
  [("permute", (1, 0)), ("reshape", (8, 1, 4)), ("expand", (8, 3, 4))],
  [("flip", (True, False)), ("flip", (False, True)), ("shrink", ((1, 3), (0, 8)))],
  [("pad", ((1, 1), (0, 0))), ("shrink", ((0, 5), (2, 6))), ("permute", (1, 0))],
], ids=["permute-permute", "permute-reshape1-expand", "flips-shrink", "pad-shrink-permute"])
def test_view_only_edits_keep_one_view(chain):
  """Permute, expand, pad, shrink, flip and splitting reshapes edit the top view in place."""
  ref, st = apply_chain((4, 8), chain)
  assert len(st.views) == 1
  assert np.array_equal(st_positions(st, simplify=False), ref)

def test_pad_sets_has_mask():
  st = ShapeTracker.from_shape((3,)).pad(((1, 2),))
  assert st.has_mask and st.shape == (6,) and not st.contiguous

def test_real_strides_single_view():
  assert ShapeTracker.from_shape((4, 8)).real_strides() == (8, 1)
  assert ShapeTracker.from_shape((4, 8)).permute((1, 0)).real_strides() == (1, 8)
  assert ShapeTracker.from_shape((4, 1)).expand((4, 5)).real_strides() == (1, 0)

@pytest.mark.parametrize("shape", [(3, 2, 0), (3, 0, 2), (0, 0, 0), (0,)])
def test_a_view_with_no_element_has_no_strides(shape):
  """A shape with a 0 in it holds nothing: every stride is 0 (as numpy's and tinygrad's), and it stays readable."""
  assert View.create(shape).strides == (0,) * len(shape) and ShapeTracker.from_shape(shape).real_strides() == (0,) * len(shape)
  t = Tensor.empty(*shape)
  assert t.uop.st.real_strides() == (0,) * len(shape) and (t + 1).numpy().shape == shape == np.zeros(shape).shape

def test_real_strides_multi_view_constant_dims():
  # splitting the merged dim back: each dim has a constant stride again, even across two views
  back = ShapeTracker.from_shape((4, 8)).permute((1, 0)).reshape((32,)).reshape((8, 4))
  assert back.real_strides() == (1, 8)

def test_real_strides_multi_view_nonconstant_is_none():
  """Regression: real_strides once probed only 0 -> 1 and reported 8 here."""
  multi = ShapeTracker.from_shape((4, 8)).permute((1, 0)).reshape((32,))  # (i//4) + (i%4)*8
  assert multi.real_strides() == (None,)

@pytest.mark.parametrize("seed", range(3))
def test_real_strides_brute_force(seed):
  """A stride real_strides reports must be the step between every pair of valid neighbours along that dim."""
  rng = random.Random(500 + seed)
  for _ in range(120):
    shape, chain = random_chain(rng)
    ref, st = apply_chain(shape, chain)
    pos = st_positions(st, simplify=False)
    for d, k in enumerate(st.real_strides()):
      if k is None or st.shape[d] < 2: continue
      a = np.take(pos, range(st.shape[d] - 1), axis=d)
      b = np.take(pos, range(1, st.shape[d]), axis=d)
      both = (a != PAD) & (b != PAD)
      assert set((b - a)[both].tolist()) <= {k}, f"dim {d} of {st}: real_strides says {k}"

# ---------------------------------------------------------------- render()

def _eval_render(expr: str, names, grid):
  """Evaluate a rendered index/valid string with Python semantics at every position of `grid`."""
  py = expr.replace("(!", "(not ")
  assert "?" not in py, f"unexpected ternary in {expr}"
  env = {n: g for n, g in zip(names, grid)}
  out = np.empty(grid[0].shape if grid else (), dtype=object)
  for pos in np.ndindex(out.shape):
    out[pos] = eval(py, {"max": max}, {n: int(env[n][pos]) for n in names})  # noqa: S307
  return out

def test_render_contiguous_exact():
  assert ShapeTracker.from_shape((4, 8)).render() == ("((idx0*8)+idx1)", "True")

def test_render_names_argument():
  idx, valid = ShapeTracker.from_shape((4, 8)).render(["row", "col"])
  assert "row" in idx and "col" in idx and "idx0" not in idx and valid == "True"

@pytest.mark.parametrize("shape,chain", [
  ((4, 8), []),
  ((4, 8), [("permute", (1, 0))]),
  ((4, 8), [("pad", ((1, 1), (2, 0)))]),
  ((4, 8), [("shrink", ((1, 3), (2, 6)))]),
  ((4, 8), [("flip", (True, False))]),
  ((4, 1, 8), [("expand", (4, 3, 8))]),
  ((4, 8), [("permute", (1, 0)), ("reshape", (32,))]),
  ((3, 4), [("pad", ((1, 0), (0, 2))), ("reshape", (4, 6)), ("permute", (1, 0))]),
], ids=["contig", "permute", "pad", "shrink", "flip", "expand", "stacked", "pad-stacked"])
def test_render_strings_evaluate_like_the_view(shape, chain):
  """The rendered strings are real expressions: evaluated in Python at every index they give numpy's answer."""
  ref, st = apply_chain(shape, chain)
  names = [f"idx{i}" for i in range(len(st.shape))]
  idx_s, valid_s = st.render()
  grid = list(np.indices(st.shape))
  valid = _eval_render(valid_s, names, grid).astype(bool)
  idx = _eval_render(idx_s, names, grid)
  assert np.array_equal(valid, ref != PAD), f"valid {valid_s!r} disagrees with numpy padding"
  assert np.array_equal(np.where(valid, idx, PAD).astype(int), ref), f"index {idx_s!r} disagrees with numpy"

def test_render_pad_validity_is_readable():
  idx, valid = ShapeTracker.from_shape((4, 8)).pad(((1, 1), (2, 0))).render()
  assert valid != "True"
  # one bound per padded side: idx0>0, idx0<5, idx1>1 (idx1 has no after-padding)
  assert "idx0" in valid and "idx1" in valid and valid.count("<") + valid.count(">") == 3

def test_render_unpadded_validity_is_true():
  st = ShapeTracker.from_shape((4, 8)).permute((1, 0)).shrink(((1, 7), (0, 4))).flip((False, True))
  assert st.render()[1] == "True"

def test_render_size_one_dims_vanish():
  idx, valid = ShapeTracker.from_shape((4, 1, 8)).render()
  assert "idx1" not in idx and valid == "True"

# ---------------------------------------------------------------- to_indexed_uops, brute force

FIXED_CHAINS = [
  ((2, 3, 4), [("permute", (2, 0, 1))]),
  ((2, 3, 4), [("permute", (2, 0, 1)), ("reshape", (4, 6))]),
  ((2, 3, 4), [("reshape", (6, 4)), ("permute", (1, 0)), ("reshape", (2, 2, 6))]),
  ((4, 4), [("pad", ((1, 2), (0, 3))), ("shrink", ((0, 7), (1, 7)))]),
  ((4, 4), [("pad", ((1, 1), (1, 1))), ("reshape", (36,)), ("shrink", ((3, 33),))]),
  ((3, 1), [("expand", (3, 5)), ("permute", (1, 0)), ("reshape", (15,))]),
  ((5,), [("flip", (True,)), ("pad", ((2, 1),)), ("flip", (True,))]),
  ((6,), [("reshape", (2, 3)), ("flip", (True, True)), ("reshape", (6,)), ("shrink", ((1, 5),))]),
  ((2, 2), [("pad", ((0, 0), (0, 2))), ("reshape", (8,)), ("reshape", (2, 2, 2)), ("permute", (2, 1, 0))]),
  ((3, 4), [("shrink", ((1, 3), (1, 3))), ("pad", ((1, 1), (1, 1))), ("permute", (1, 0)), ("reshape", (16,))]),
  ((4,), [("reshape", (4, 1)), ("expand", (4, 3)), ("reshape", (12,)), ("reshape", (3, 4)), ("permute", (1, 0))]),
  ((8,), [("reshape", (2, 4)), ("pad", ((0, 0), (0, 1))), ("reshape", (10,)), ("shrink", ((0, 9),))]),
]

@pytest.mark.parametrize("shape,chain", FIXED_CHAINS, ids=[f"chain{i}" for i in range(len(FIXED_CHAINS))])
@pytest.mark.parametrize("simplify", [False, True], ids=["raw", "symbolic"])
def test_fixed_chains_match_numpy(shape, chain, simplify):
  ref, st = apply_chain(shape, chain)
  assert np.array_equal(st_positions(st, simplify), ref), f"{st}"

RNG_SEEDS = list(range(8))

@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_random_chains_raw_index_math(seed):
  """The unsimplified index/valid expressions of random movement chains reproduce numpy exactly."""
  rng = random.Random(1000 + seed)
  cases = [random_chain(rng) for _ in range(60)]
  bad = chain_mismatches(cases, simplify=False)
  assert not bad, f"{len(bad)} chains disagree with numpy, first: {bad[0]}"

# Chains whose symbolic-simplified index math was wrong before divmod_sum checked for negative terms (regressions).
SYMBOLIC_BAD_CHAINS = [
  ((4, 3), [("permute", (1, 0)), ("reshape", (3, 1, 4)), ("reshape", (4, 3)), ("flip", (True, False))]),
  ((4, 3), [("pad", ((1, 1), (0, 2))), ("reshape", (15, 2)), ("flip", (True, False)), ("flip", (False, True))]),
  ((3, 3, 1), [("expand", (3, 3, 2)), ("reshape", (3, 1, 3, 2)), ("reshape", (2, 9)), ("flip", (False, True))]),
]

@pytest.mark.parametrize("idx", range(len(SYMBOLIC_BAD_CHAINS)))
def test_symbolic_index_math_on_flipped_stacked_views(idx):
  shape, chain = SYMBOLIC_BAD_CHAINS[idx]
  ref, st = apply_chain(shape, chain)
  assert np.array_equal(st_positions(st, simplify=True), ref)

def test_random_chains_symbolic_index_math():
  """Simplifying with `symbolic` must not change what the expressions compute."""
  rng = random.Random(4242)
  cases = [random_chain(rng) for _ in range(400)] + SYMBOLIC_BAD_CHAINS
  bad = chain_mismatches(cases, simplify=True)
  assert not bad, f"{len(bad)} of {len(cases)} chains disagree with numpy after symbolic, first: {bad[0]}"

def test_random_chains_symbolic_index_math_without_flips():
  """Without negative strides the simplified expressions stay correct (narrows the bug above to flips)."""
  rng = random.Random(777)
  cases = []
  while len(cases) < 150:
    shape, chain = random_chain(rng)
    if all(k != "flip" for k, _ in chain): cases.append((shape, chain))
  bad = chain_mismatches(cases, simplify=True)
  assert not bad, f"{len(bad)} chains disagree, first: {bad[0]}"

# ---------------------------------------------------------------- composition (st1 + st2)

def _compose_case(shape, first, second):
  """st_a for `first`, st_b for `second` from st_a's shape; st_a + st_b must equal applying both in turn."""
  ref, st_a = apply_chain(shape, first)
  ref2, st_b = apply_chain(ref.shape, second)
  both = np.where(ref2 == PAD, PAD, ref.reshape(-1)[np.where(ref2 == PAD, 0, ref2)])
  return st_a, st_b, both

@pytest.mark.parametrize("shape,first,second", [
  ((4, 8), [("permute", (1, 0))], [("reshape", (32,))]),
  ((4, 8), [("reshape", (32,))], [("reshape", (4, 8)), ("permute", (1, 0))]),
  ((4, 8), [("pad", ((1, 1), (0, 0)))], [("permute", (1, 0)), ("reshape", (48,))]),
  ((4, 1), [("expand", (4, 3))], [("reshape", (12,)), ("shrink", ((2, 10),))]),
], ids=["permute+reshape", "reshape+permute", "pad+stack", "expand+shrink"])
def test_compose_matches_sequential(shape, first, second):
  st_a, st_b, both = _compose_case(shape, first, second)
  st = st_a + st_b
  assert st.shape == both.shape
  assert np.array_equal(st_positions(st, simplify=False), both)

@pytest.mark.parametrize("shape,first,second", [
  ((3,), [("flip", (True,))], [("shrink", ((0, 2),))]),
  ((2,), [("pad", ((1, 1),))], [("shrink", ((0, 3),))]),
  ((2, 2), [("permute", (1, 0))], [("shrink", ((0, 1), (0, 2)))]),
], ids=["flip+prefix", "pad+prefix", "permute+row0"])
def test_compose_with_prefix_shrink(shape, first, second):
  """Regression: simplify() once called below.reshape(top.shape) for a smaller 'contiguous' prefix view (ValueError)."""
  st_a, st_b, both = _compose_case(shape, first, second)
  st = st_a + st_b
  assert np.array_equal(st_positions(st, simplify=False), both)

def test_view_plus_view_reads_one_broadcast_element_as_one_view():
  """tinygrad's View + View: `top` read through the view below it, as one view (or None). Every index of `below` reads
  element 5, so any unmasked top reads it too; the merge matches the stack position for position."""
  below, top = View.create((4,), (0,), 5), View.create((2,), (2,), 1)
  assert (merged := below + top) == View.create((2,), (0,), 5)
  assert np.array_equal(st_positions(ShapeTracker((merged,)), False), st_positions(ShapeTracker((below, top)), False))
  assert View.create((4,), (1,), 0) + top == top and View.create((4, 2)).permute((1, 0)) + View.create((8,)) is None

# ---------------------------------------------------------------- 0-d results (x[i] of a 1-element view)

@pytest.mark.parametrize("shape,chain", [
  ((3,), [("shrink", ((1, 2),)), ("reshape", ())]),
  ((2, 3), [("permute", (1, 0)), ("shrink", ((2, 3), (1, 2))), ("reshape", ())]),
  ((1,), [("reshape", ()), ("reshape", (1, 1)), ("expand", (2, 3))]),
  ((3,), [("pad", ((1, 1),)), ("shrink", ((2, 3),)), ("reshape", ())]),
], ids=["valid-elem", "permuted-elem", "0d-expand", "pad-valid-elem"])
def test_reshape_to_0d(shape, chain):
  ref, st = apply_chain(shape, chain)
  assert np.array_equal(st_positions(st, simplify=True), ref)

ZERO_D_BUG = "bug: View.reshape(()) of an all-invalid (fully padded) view drops the mask: the element becomes valid"

@pytest.mark.parametrize("shape,chain", [
  ((1,), [("pad", ((0, 1),)), ("shrink", ((1, 2),)), ("reshape", ())]),
  ((3,), [("pad", ((0, 1),)), ("flip", (False,)), ("shrink", ((3, 4),)), ("reshape", ())]),
  ((4, 2), [("reshape", (4, 1, 2)), ("pad", ((1, 1), (1, 2), (0, 0))), ("shrink", ((3, 4), (0, 1), (1, 2))), ("reshape", ())]),
], ids=["pad1", "pad3", "pad-3d"])
def test_reshape_all_padding_to_0d(shape, chain):
  ref, st = apply_chain(shape, chain)
  assert ref.shape == () and ref == PAD
  assert st.render()[1] == "False"
  assert np.array_equal(st_positions(st, simplify=False), ref)

# ---------------------------------------------------------------- exhaustive small cases

@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_all_permutations_then_flatten(order):
  ref, st = apply_chain((2, 3, 4), [("permute", order), ("reshape", (24,))])
  assert np.array_equal(st_positions(st, simplify=False), ref)
  assert np.array_equal(st_positions(st, simplify=True), ref)

@pytest.mark.parametrize("b,e", [(b, e) for b in range(4) for e in range(b + 1, 5)])
def test_all_pad_then_shrink_windows(b, e):
  ref, st = apply_chain((2,), [("pad", ((1, 1),)), ("shrink", ((b, e),))])
  assert np.array_equal(st_positions(st, simplify=True), ref)

# ---------------------------------------------------------------- index math simplified where the masks hold

def test_masked_stacked_views_simplify_where_valid():
  """The gradient of a window view (`_pool`, as max_pool2d/avg_pool2d use it; conv2d has a gradient rule of its own)
  folds windows back through padded, reshaped views. Inside the masks, each masked dim's index has a known range,
  and knowing it removes most of the division and modulo: the index must get simpler, and stay equal to the plain
  one wherever the load is valid."""
  from lazynb import Tensor
  x = Tensor.rand(2, 3, 8, 8, requires_grad=True)
  w = Tensor.rand(3, 6, 6, 3, 3)
  (x._pool((3, 3)) * w).sum().backward()
  sts = [u.arg for it in x.grad.schedule() if it.kind == "kernel" for u in it.ast.toposort()
         if u.op is Ops.VIEW and len(u.arg.views) >= 3 and any(v.mask for v in u.arg.views[:-1])]
  assert sts, "expected the fold's stacked, masked views"
  def divmods(u): return sum(n.op in (Ops.IDIV, Ops.MOD) for n in u.toposort())
  counts = []
  for st in sts:
    names = [f"i{d}" for d in range(len(st.shape))]
    idxs = [UOp(Ops.SPECIAL, dtypes.index, (), (n, s)) for n, s in zip(names, st.shape)]
    new_idx, new_valid = graph_rewrite(UOp.sink(*st.to_indexed_uops(idxs)), symbolic).src
    old_idx, old_valid = graph_rewrite(UOp.sink(*st._stacked(idxs)), symbolic).src  # the plain stack: no names for masked dims
    counts.append((divmods(new_idx), divmods(old_idx)))
    assert counts[-1][0] <= counts[-1][1], counts
    env = dict(zip(names, np.indices(st.shape)))
    ok = np.broadcast_to(eval_uop(old_valid, env), st.shape)
    np.testing.assert_array_equal(np.broadcast_to(eval_uop(new_valid, env), st.shape), ok)
    np.testing.assert_array_equal(np.broadcast_to(eval_uop(new_idx, env), st.shape)[ok], np.broadcast_to(eval_uop(old_idx, env), st.shape)[ok])
  assert any(new < old for new, old in counts), counts
