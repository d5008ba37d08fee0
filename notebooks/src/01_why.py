# %% [markdown]
# # Part 1 — Why open up a tensor compiler?
#
# When you call `loss.backward()` in PyTorch, a great deal happens: a dispatcher picks an implementation for
# every op, autograd records a tape, a caching allocator hands out memory, and precompiled CUDA kernels run.
# Almost all of it lives in C++ and CUDA, so you can only watch its *effects*.
#
# tinygrad took the opposite route: the whole path from `Tensor` to the kernel that runs is Python you can read.
# **lazynb** is a small compiler built in tinygrad's classic design (same API: `Tensor`, `.uop`, `.schedule()`,
# `realize()`, `PatternMatcher`, `DEBUG`/`NOOPT`/`BEAM`), plus a notebook layer that shows every stage. These
# notebooks teach the tinygrad course with lazynb as the specimen; where lazynb differs from tinygrad, they say so.
#
# **How every notebook works: predict → run → see.** Before a cell whose result is not obvious you get a question.
# Pick an option, or type a number, and press *Lock in* (without widgets: `q_first.answer(2)` for a number, or
# `.predict("...")` with an option's text), run the next cells, and look at what the compiler actually did: the check
# cell prints the measurement next to your prediction. Each claim is
# also checked by an `assert`, so if lazynb changes, the notebook fails rather than teaching something false.

# %%
%load_ext lazynb
from lazynb import Tensor, Device, Context, GlobalCounters, dtypes, Ops, nn
from lazynb.trace import capture
from lazynb.notebook.quiz import ask_number
print("lazynb is ready; default device:", Device.DEFAULT)

# %% [markdown]
# ## 1. Small enough to read
#
# The course says tinygrad is "about 5,000 lines of Python" (the slides say "under 8,000"); today's tinygrad has grown
# well past that. lazynb's compiler, counted below, is about 8,000 lines: it does less than tinygrad (a few
# backends, no multi-GPU, no JIT graphs for GPUs), but it has every stage.

# %% [markdown]
# Count them: one row per part of the package.

# %%
import pathlib, lazynb
root = pathlib.Path(lazynb.__file__).parent
def code_lines(p):
  return sum(1 for line in p.read_text().splitlines() if line.strip() and not line.strip().startswith("#"))
parts = {}
for p in sorted(root.rglob("*.py")):
  rel = p.relative_to(root)
  part = rel.parts[0] if len(rel.parts) > 1 else rel.name
  parts[part] = parts.get(part, 0) + code_lines(p)
for part, n in sorted(parts.items(), key=lambda kv: -kv[1]): print(f"  {part:14s} {n:5d}")
core = sum(n for part, n in parts.items() if part != "notebook")
print(f"compiler (all but notebook/): {core} lines; notebook layer: {parts['notebook']} lines")

# %%
assert 2_000 <= core < 12_000, core   # the order of magnitude the text states must hold

# %% [markdown]
# ## 2. Watch one line of code become a kernel
#
# `%%tinygrad` at the top of a cell runs the cell normally, but with a recorder listening to everything the
# compiler does. Below the cell you get sliders (DEBUG, NOOPT, BEAM, device: moving one re-runs the cell) and a
# tabbed view of what happened.

# %%
q_first = ask_number("x = Tensor([1.0, 2.0, -3.0, 4.0]); y = (x * 2 + 1).relu(). How many C functions (kernels) does "
                     "lazynb write to compute y? (0 if you think NumPy does it underneath.)", key="01_why.q_first")

# %%
%%tinygrad
x = Tensor([1.0, 2.0, -3.0, 4.0])
y = (x * 2 + 1).relu()
print(y.tolist())

# %% [markdown]
# **What you see.** The header line counts schedule items and kernels. The tabs:
#
# - **Kernels**: the schedule first, the work in the order it ran. Here: a *copy* (your Python list moving from host
#   memory onto the CPU device) and one *kernel*, with the reason the graph was cut there (`realize`: you asked for the
#   value). Then, per kernel, its AST as a graph, its ShapeTracker views (every load and store, with the index
#   expression it compiles to) and the generated C source of `E_4` (E for elementwise, 4 elements), with its launch
#   sizes and the optimizations applied. The 4 elements are written out one by one instead of looping (an *upcast*).
# - **Tensor graph**: the lazy UOp graph you built. Colours mark the kind of node (buffer, ALU, movement, constant...).
# - **Rewrites**: the graph-rewrite passes that simplified it. **Timing**: compile and run time per kernel.
#
# Try the **NOOPT** box: the kernel turns into a plain `for` loop. **DEBUG=3** prints the C of each kernel lazynb makes;
# a kernel it already made in this session (the same cell re-run as it was) is reused and prints nothing, so change a
# shape (or NOOPT) to see one printed.

# %%
with capture() as tr:
  y2 = (Tensor([1.0, 2.0, -3.0, 4.0]) * 2 + 1).relu().realize()
assert y2.tolist() == [3.0, 5.0, 0.0, 9.0]
assert [s["kind"] for s in tr.schedule] == ["copy", "kernel"]
assert len(tr.kernels) == 1 and tr.kernels[0]["name"] == "E_4"
q_first.reveal(len(tr.kernels))
print(tr.kernels[0]["source"])

# %% [markdown]
# ## 3. Where tinygrad sits
#
# ```
# micrograd   ->   tinygrad / lazynb   ->   PyTorch
# (scalars)        (lazy tensors,            (production,
#                   real kernels,             mostly C++)
#                   readable compiler)
# ```
#
# - **micrograd** differentiates a graph of Python scalars: perfect for understanding backprop, nothing about
#   kernels or memory.
# - **tinygrad** (and lazynb) add tensors, laziness, a scheduler that fuses ops into kernels, and code generators
#   for real devices, in readable Python.
# - **PyTorch** is what you build products with; its internals are the part you cannot easily read.
#
# The slides "tinygrad: from MNIST to ALUs" name the three execution styles: **eager** (PyTorch: each op runs when called),
# **graph** (TensorFlow 1, `torch.compile`: you build a graph, then compile it) and **lazy** (tinygrad: you write
# eager-looking code, and the graph is built for you behind the scenes). Part 4 measures the difference.

# %% [markdown]
# ## 4. Why hardware engineers care: the op set your chip must run
#
# tinygrad's pitch to chip builders ("commoditize the petaflop") is that a backend only has to run a short
# list of primitive ops: there is no matmul or convolution primitive to hand-write. Let's check that claim on a
# full training step of a small MLP: forward, cross-entropy loss, backward, and an SGD update.

# %%
%%tinygrad --show schedule,timing
Tensor.manual_seed(0)
l1, l2 = nn.Linear(8, 16), nn.Linear(16, 3)
opt = nn.optim.SGD(nn.state.get_parameters([l1, l2]), lr=0.1)
x, labels = Tensor.randn(4, 8), Tensor([0, 2, 1, 0])
with Tensor.train():
  loss = l2(l1(x).relu()).sparse_categorical_crossentropy(labels)
  opt.zero_grad()
  loss.backward()
  loss.realize(*opt.schedule_step())   # the loss and the weight update, in one schedule
print("loss:", loss.item())

# %% [markdown]
# The schedule lists every kernel of the step: the forward pass, the gradients, the weight updates. Now collect
# the op of every node in every kernel that ran:

# %%
from lazynb.uop.ops import GroupOp
with capture(rewrites=False) as tr:
  with Tensor.train():
    loss = l2(l1(x).relu()).sparse_categorical_crossentropy(labels)
    opt.zero_grad()
    loss.backward()
    loss.realize(*opt.schedule_step())
asts = [e.data["item"].ast for e in tr.events if e.kind == "exec" and e.data["kind"] == "kernel"]
used = set().union(*({u.op for u in a.toposort()} for a in asts))
compute = sorted(o.name for o in used & (GroupOp.ALU | {Ops.CAST, Ops.REDUCE_AXIS}))
print(f"{len(asts)} kernels; compute ops used: {compute}")
print("memory/structure ops:", sorted(o.name for o in used - GroupOp.ALU - {Ops.CAST, Ops.REDUCE_AXIS}))

# %%
assert "MATMUL" not in Ops.__members__ and "CONV" not in Ops.__members__   # no such primitives exist at all
assert not used & GroupOp.Movement, "movement ops never reach a kernel: they became VIEWs (index math)"
assert {Ops.MUL, Ops.ADD, Ops.REDUCE_AXIS} <= used
assert len(compute) <= 14, compute

# %% [markdown]
# About a dozen elementwise ops plus a reduction cover a whole training step. The movement ops (reshape,
# permute, expand) that `@` and broadcasting use never reach a kernel: the scheduler turns them into *views*,
# index arithmetic inside loads and stores (Part 5). A chip that runs these ops, fast, can train this network.
#
# That is the argument of the slides: the three kinds of primitive (elementwise, reduce, movement) are what an
# accelerator must support, and the rest of the stack is search and code generation. The same reasoning is why
# comma.ai's openpilot runs its driving model through tinygrad on the car's own chip: a small, readable stack is
# one you can port.
#
# **The philosophy**, per the slides: surface all complexity (no vendor libraries hiding the work), avoid
# Turing-complete middle layers such as LLVM IR (they throw away what the compiler knew), and prefer **search**
# over hand-written heuristics (BEAM search, Part 7).
#
# Next: **02_setup** installs lazynb, shows the DEBUG levels and the `%%tinygrad` magic in detail.

# %% [markdown]
# ## Exercise: relu from a comparison
#
# Write `my_relu(x)` without `relu`, `maximum` or `clip` (they are switched off during the check): a comparison and
# `where`. The check compares it with numpy and makes sure it runs as one kernel.

# %%
# EXERCISE 01.relu
def my_relu(x):
  # YOUR CODE
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("01.relu", my_relu)
