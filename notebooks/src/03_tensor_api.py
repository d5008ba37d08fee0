# %% [markdown]
# # Part 3 — The Tensor API
#
# lazynb's `Tensor` has tinygrad's API, which in turn looks like PyTorch's. The slides sum up the style: there is
# no `nn.Module` base class and no `forward`; stateless operations are not classes but **methods on Tensor**
# (`x.relu()`, `x.conv2d(w)`, `x.sparse_categorical_crossentropy(y)`), and there are a lot of them.
#
# This part is a tour of that API, each piece checked against NumPy. Watch one thing throughout: **when** does a
# tensor actually hold data? Part 4 is about that question; here you meet the first surprises.

# %%
%load_ext lazynb
import numpy as np
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes
from lazynb.trace import capture
from lazynb.ops import Ops
from lazynb.notebook.quiz import quiz

# %% [markdown]
# ## Creating tensors

# %%
made = {
  "Tensor([1, 2, 3, 4])": Tensor([1, 2, 3, 4]),
  "Tensor(np.array(...))": Tensor(np.array([[1.0, 2.0], [3.0, 4.0]])),
  "Tensor.zeros(3, 4)": Tensor.zeros(3, 4),
  "Tensor.ones(3, 4)": Tensor.ones(3, 4),
  "Tensor.randn(3, 4)": Tensor.randn(3, 4),       # normal distribution
  "Tensor.rand(3, 4)": Tensor.rand(3, 4),         # uniform in [0, 1)
  "Tensor.arange(0, 10, 2)": Tensor.arange(0, 10, 2),
  "Tensor.eye(4)": Tensor.eye(4),
}
for name, t in made.items(): print(f"{name:26s} shape={str(t.shape):8s} dtype={t.dtype}")

# %% [markdown]
# Every one of them has a shape and a dtype at once. But does each already hold its numbers in device memory?

# %%
q_real = quiz("Right after creation, which of these tensors is already realized (its data sits in a device buffer)?",
              ["Tensor([1, 2, 3, 4])", "Tensor.zeros(3, 4)", "Tensor.randn(3, 4)", "none of them: everything is lazy"], key="03_tensor_api.q_real")

# %%
born_realized = [name for name, t in made.items() if t.uop.is_realized]
for name, t in made.items(): print(f"{name:26s} realized={t.uop.is_realized}  top UOp: {t.uop.op}")

# %% [markdown]
# Three different stories:
#
# - `Tensor([1, 2, 3, 4])` is a **COPY** waiting to happen: the list went into a buffer on the `PYTHON` device (host
#   memory), and moving it to the CPU device is part of the graph.
# - `Tensor.zeros(3, 4)` is a single **CONST** 0.0, reshaped to `(1, 1)` and **EXPAND**ed to `(3, 4)`: no memory at
#   all until something needs it.
# - `Tensor.randn(3, 4)` is a **BUFFER** that already holds data.
# - `Tensor.arange(0, 10, 2)` is an **ARANGE** (the numbers 0, 1, 2, ... as a node without memory) times 2: a kernel
#   that needs it computes element i as `i*2` from its own loop index, so it never travels through memory.
#
# (This is a lazynb difference: tinygrad generates random numbers on the device, with kernels, lazily.)
# What does each cost when you finally realize it?

# %%
costs = {}
for name in ["Tensor([1, 2, 3, 4])", "Tensor.zeros(3, 4)", "Tensor.randn(3, 4)"]:
  with capture(rewrites=False) as tr: made[name].realize()
  costs[name] = [s["kind"] for s in tr.schedule]
  print(f"{name:24s} ran: {costs[name]}")

# %%
assert born_realized == ["Tensor.randn(3, 4)", "Tensor.rand(3, 4)", "Tensor.eye(4)"]
assert "Tensor([1, 2, 3, 4])" not in born_realized
q_real.reveal(next(o for o in q_real.options if o in born_realized))
assert costs == {"Tensor([1, 2, 3, 4])": ["copy"], "Tensor.zeros(3, 4)": [], "Tensor.randn(3, 4)": []}
assert made["Tensor([1, 2, 3, 4])"].uop.is_realized and made["Tensor.zeros(3, 4)"].uop.base.op is Ops.CONST
zeros_memory = made["Tensor.zeros(3, 4)"].numpy()   # now something needs the twelve zeros in memory: one kernel
assert zeros_memory.shape == (3, 4) and not zeros_memory.any()

# %% [markdown]
# The list cost a **copy**, randn nothing, and the zeros nothing either: a tensor made only of constants stays a
# constant after `realize()` (tinygrad does the same). Memory is filled only when something needs it, here `.numpy()`:
# that runs a tiny kernel that writes 0.0 twelve times. After `realize()`, the list's `uop` is a plain BUFFER.
#
# ## dtypes and promotion

# %%
q_div = quiz("Tensor([1, 2, 3]) / 2 gives ...", ["[0, 1, 1] (int)", "[0.5, 1.0, 1.5] (float)", "an error"], key="03_tensor_api.q_div")

# %%
i = Tensor([1, 2, 3])
for expr, t in [("i", i), ("i / 2", i / 2), ("i // 2", i // 2), ("i * 0.5", i * 0.5), ("i + 1", i + 1), ("i > 1", i > 1)]:
  print(f"{expr:8s} {str(t.dtype):16s} {t.tolist()}")

# %%
assert (i / 2).tolist() == [0.5, 1.0, 1.5] and (i / 2).dtype == dtypes.float32
assert (i // 2).tolist() == [0, 1, 1] and (i + 1).dtype == dtypes.int32 and (i > 1).dtype == dtypes.bool
assert Tensor(np.array([1.0, 2.0])).dtype == dtypes.float64  # a NumPy array keeps its dtype (float64), as in tinygrad
q_div.reveal(f"{(i / 2).tolist()} (float)")

# %% [markdown]
# ## Operations
#
# Elementwise ops, reductions, matrix multiplication and shape changes, each compared with NumPy. The `axis`
# argument and `keepdim` work as in PyTorch.

# %%
A, B = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
a, b = Tensor(A), Tensor(B)
checks = {
  "a + b": (a + b, A + B), "a * b": (a * b, A * B), "a.relu()": (a.relu(), np.maximum(A, 0)),
  "a.exp()": (a.exp(), np.exp(A)), "a.abs().log()": (a.abs().log(), np.log(np.abs(A))),
  "a.abs().sqrt()": (a.abs().sqrt(), np.sqrt(np.abs(A))),
  "a.sum()": (a.sum(), A.sum()), "a.sum(axis=0)": (a.sum(axis=0), A.sum(0)),
  "a.max(axis=1, keepdim=True)": (a.max(axis=1, keepdim=True), A.max(1, keepdims=True)),
  "a @ b": (a @ b, A @ B), "a.T": (a.T, A.T),
  "a.reshape(2, 8)": (a.reshape(2, 8), A.reshape(2, 8)), "a.permute(1, 0)": (a.permute(1, 0), A.transpose(1, 0)),
  "a.expand(2, 4, 4)": (a.expand(2, 4, 4), np.broadcast_to(A, (2, 4, 4))),
  "a.unsqueeze(0)": (a.unsqueeze(0), A[None]), "a.unsqueeze(0).squeeze(0)": (a.unsqueeze(0).squeeze(0), A),
}
for name, (t, ref) in checks.items():
  np.testing.assert_allclose(t.numpy(), ref, rtol=1e-5, atol=1e-5)
  print(f"{name:28s} shape {str(t.shape):10s} matches NumPy")

# %% [markdown]
# Indexing and joining are built from the same few primitives: a slice with a step is a shrink plus a reshape, and
# `cat` pads each piece to the full size and adds them. More on that in Part 5.

# %%
x = Tensor.arange(24).reshape(2, 3, 4)
X = np.arange(24).reshape(2, 3, 4)
assert x[1:2, :, ::2].tolist() == X[1:2, :, ::2].tolist()
assert x[:, -1].tolist() == X[:, -1].tolist() and x[..., 0].tolist() == X[..., 0].tolist()
assert x.cat(x, dim=1).tolist() == np.concatenate([X, X], 1).tolist()
assert Tensor([1, 2]).stack(Tensor([3, 4])).tolist() == [[1, 2], [3, 4]]
print(x[1:2, :, ::2].tolist())

# %% [markdown]
# ## Tensors of the intro blog
#
# The tinygrad intro blog starts with `t = Tensor([1, 2, 3, 4])`, doubles it, then adds 3 and then 4 (one of its
# printed results is a typo: `t + 3 + 4` is `[8, 9, 10, 11]`). Watch what the compiler makes of the two constants:

# %%
%%tinygrad --show schedule,kernels
t = Tensor([1, 2, 3, 4])
doubled = (t * 2).tolist()
result = (t + 3 + 4).tolist()
print(doubled, result)

# %% [markdown]
# Two kernels ran, `t * 2` and `t + 3 + 4` (and one copy, of the list, for the first). Look at the second kernel's
# C source in the **Kernels** tab: it adds **7**. The two constants were folded into one while the kernel was
# compiled (Part 7 shows the rewrite rule that does it).

# %%
assert doubled == [2, 4, 6, 8] and result == [8, 9, 10, 11]
with capture(rewrites=False) as tr:
  (Tensor([1, 2, 3, 4]) + 3 + 4).realize()
assert len(tr.kernels) == 1 and "+7)" in tr.kernels[0]["source"]

# %% [markdown]
# ## Getting values back
#
# - `t.realize()` runs whatever the tensor still needs and returns **the same tensor** (now holding a buffer).
# - `t.numpy()` realizes and copies the data into a NumPy array; `t.tolist()` gives Python lists.
# - `t.item()` gives one Python number, for a tensor with exactly one element (a loss, say).

# %%
t = Tensor.randn(3, 3)
same = t.realize()
loss = ((Tensor([1.0, 2.0, 3.0]) - Tensor([1.0, 2.0, 5.0])) ** 2).mean()
print("realize returns the same object:", same is t)
print("numpy():", type(t.numpy()).__name__, t.numpy().shape, " item():", loss.item(), type(loss.item()).__name__)

# %%
assert same is t and isinstance(t.numpy(), np.ndarray)
assert isinstance(loss.item(), float) and abs(loss.item() - 4 / 3) < 1e-6
try:
  t.item()
  raise AssertionError("item() of a 3x3 tensor should fail")
except ValueError as e: print("t.item() on 9 elements:", e)

# %% [markdown]
# Next: **04_laziness**. All these tensors were lazy until you asked for numbers; Part 4 looks at the graph they
# build in the meantime.

# %% [markdown]
# ## Exercise: one-hot labels
#
# Write `one_hot(labels, num_classes)`: integer labels of shape `(n,)` become an `(n, num_classes)` tensor with a 1
# at each row's label and 0 elsewhere. Hint: compare a reshaped `labels` with a reshaped `Tensor.arange`; broadcasting
# does the rest, and a comparison gives booleans: make them numbers. (`Tensor.one_hot` is switched off during the check.)

# %%
# EXERCISE 03.one_hot
def one_hot(labels, num_classes):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("03.one_hot", one_hot)
