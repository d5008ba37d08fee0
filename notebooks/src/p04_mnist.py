# %% [markdown]
# # Project 4: training a CNN on MNIST
#
# An end-to-end training run with everything from the earlier projects in play: the data goes in as tensors,
# the model is a handful of layers, each training step is one big lazy graph (forward, gradients, Adam update)
# that the compiler schedules into kernels, and `TinyJit` replays those kernels for every later batch.
#
# You will train, profile a step, try BEAM on the step's slowest kernel, evaluate, save with `safe_save`,
# reload and check that the accuracy is identical. The same run as a script: `examples/project4_mnist.py`
# (`--quick` for the small version).
#
# **How long this takes.** By default this notebook trains the course's CNN at full size: 200 steps of 512
# images (about 1.7 epochs) with Adam at lr 0.005. With the environment variable `LAZYNB_QUICK=1` (which the
# test suite sets) it trains a narrow version of the same network on 10,000 images for 80 steps of 64 and checks
# a lower accuracy bar. The course asks for >98%, and the full run's check below asks for 98%.
#
# **A recorded full run.** `notebooks/runs/p04_mnist.full.ipynb` is this notebook run at full size on a 2-core
# AMD EPYC with AVX-512 (its text outputs, made with `tools/record_run.py`; tests/test_notebook_prose.py checks that
# its code is this notebook's code and that the figures here are its figures): a step took 0.27 s on average, so the
# training took 0.9 minutes (53.2 s), and the model scored 98.60% on the whole test set of 10,000 images. On a
# machine other jobs are using, expect several times longer.
#
# **Differences from the course text.** `from tinygrad.nn.datasets import mnist` is
# `from lazynb.nn.datasets import mnist`. It reads the four MNIST `.gz` files from `$LAZYNB_DATA/mnist/` or
# `~/.cache/lazynb/mnist/`, and downloads them (about 11 MB) to the cache when neither has them. Offline, copy the
# files into a folder `mnist` and set `LAZYNB_DATA` to the folder that holds it (the README's "Data" section).

# %%
%load_ext lazynb
import math, os, tempfile, time
import numpy as np
from lazynb import Tensor, TinyJit, GlobalCounters, Context, Device, nn
from lazynb.nn.datasets import mnist
from lazynb.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load
from lazynb.trace import Recorder
from lazynb.notebook.quiz import quiz

QUICK = os.environ.get("LAZYNB_QUICK", "0") == "1"
if QUICK: WIDTH, BATCH, STEPS, LR, TRAIN_SUBSET, TEST_SUBSET, MIN_ACC = 8, 64, 80, 0.02, 10_000, 1_000, 0.85
else:     WIDTH, BATCH, STEPS, LR, TRAIN_SUBSET, TEST_SUBSET, MIN_ACC = 32, 512, 200, 0.005, None, None, 0.98
print(f"{'quick' if QUICK else 'full'} run: width {WIDTH}, batch {BATCH}, {STEPS} steps, Adam lr {LR}, needs > {MIN_ACC:.0%} test accuracy")

# %% [markdown]
# ## The data

# %%
X_train, Y_train, X_test, Y_test = mnist()
if TRAIN_SUBSET: X_train, Y_train = X_train[:TRAIN_SUBSET], Y_train[:TRAIN_SUBSET]
if TEST_SUBSET: X_test, Y_test = X_test[:TEST_SUBSET], Y_test[:TEST_SUBSET]
X_train, Y_train, X_test, Y_test = [t.realize() for t in (X_train, Y_train, X_test, Y_test)]
print("train", X_train.shape, X_train.dtype.name, " test", X_test.shape, " labels", Y_train.dtype.name)
print(f"{STEPS} steps of {BATCH} images: {STEPS * BATCH / X_train.shape[0]:.1f} epochs of {X_train.shape[0]:,} training images")
assert X_train.shape[1:] == (1, 28, 28) and int(Y_train.numpy().max()) == 9

# %% [markdown]
# ## The model
#
# There is no `nn.Module` to inherit from: a model is any object holding tensors, with a `__call__`.
# `get_parameters` finds every tensor inside it, including BatchNorm's running statistics (state that is
# saved with the model but not trained).

# %%
class Model:
  def __init__(self, w=32):
    self.layers = [
      nn.Conv2d(1, w, 5), Tensor.relu, nn.Conv2d(w, w, 5), Tensor.relu, nn.BatchNorm(w), Tensor.max_pool2d,
      nn.Conv2d(w, 2 * w, 3), Tensor.relu, nn.Conv2d(2 * w, 2 * w, 3), Tensor.relu, nn.BatchNorm(2 * w), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(2 * w * 3 * 3, 10)]
  def __call__(self, x): return x.sequential(self.layers)

Tensor.manual_seed(42)
model = Model(WIDTH)
opt = nn.optim.Adam(get_parameters(model), lr=LR)
n_params = sum(int(np.prod(p.shape)) for p in opt.params)
print(f"{len(opt.params)} trained tensors, {n_params:,} numbers; {len(opt.buffers)} state tensors (running statistics)")
assert len(opt.params) == 14 and len(opt.buffers) == 6

def step(x, y):
  with Tensor.train():
    opt.zero_grad()
    loss = model(x.float() / 255.0).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()   # one schedule: the gradients, the loss and Adam's update
    return loss

rng = np.random.default_rng(0)
xs, ys = X_train.numpy(), Y_train.numpy()
def batch():
  idx = rng.integers(0, xs.shape[0], BATCH)
  return Tensor(xs[idx]), Tensor(ys[idx])

# %% [markdown]
# ## One step under the microscope
#
# Before training, run a single step the ordinary way and look at its schedule: every convolution, its
# gradient with respect to the input and to the weights, BatchNorm's statistics, the loss, and Adam's update of
# each parameter tensor become kernels.

# %%
q_kernels = quiz("Roughly how many kernels does one training step of this CNN run?",
                 ["about 5", "about 100", "about 10,000"], key="p04_mnist.q_kernels")

# %%
%%tinygrad --show schedule,timing
with Recorder(rewrites=False) as rec_step:
  GlobalCounters.reset()
  first_loss = step(*batch()).item()
  kernels_per_step = GlobalCounters.kernel_count

# %%
execs = [e.data for e in rec_step.of("exec") if e.data["kind"] == "kernel"]
total = sum(d["seconds"] for d in execs)
print(f"{kernels_per_step} kernels, {total * 1e3:.0f} ms of kernel time; the five slowest:")
for d in sorted(execs, key=lambda d: -d["seconds"])[:5]:
  print(f"  {d['name']:32s} {d['seconds'] * 1e3:8.2f} ms  ({d['seconds'] / total:5.1%})")
assert 30 < kernels_per_step < 300
q_kernels.reveal(min(q_kernels.options, key=lambda o: abs(math.log10(int(o.split()[1].replace(",", ""))) - math.log10(kernels_per_step))))
assert np.isfinite(first_loss) and 1.5 < first_loss < 3.5, first_loss   # about ln(10) = 2.3 for a fresh model

# %% [markdown]
# ## Training
#
# `TinyJit` runs the step normally twice (the second time it records every kernel and the buffers it used),
# then replays the recorded kernels with each new batch swapped in, skipping the Python graph building.

# %%
train_step = TinyJit(step)
st, losses = time.perf_counter(), []
for i in range(STEPS):
  GlobalCounters.reset()
  losses.append(train_step(*batch()).item())
  if i % 10 == 0 or i == STEPS - 1:
    print(f"step {i:3d}  loss {losses[-1]:.3f}  {(i + 1) / (time.perf_counter() - st):.2f} steps/s")
jit_kernels = GlobalCounters.kernel_count
train_seconds = time.perf_counter() - st

# %%
print(f"{train_seconds:.1f} s of training ({train_seconds / 60:.1f} min), {train_seconds / STEPS:.2f} s per step; "
      f"the jitted step replays {jit_kernels} kernels")
assert jit_kernels == kernels_per_step, "the replay runs the same kernels as the step it captured"
assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:5])

# %% [markdown]
# ## BEAM on the slowest kernel
#
# The course suggests retraining with `BEAM=2`. That searches every kernel of the step, which on a CPU takes a
# long time: BEAM compiles and *times* dozens of variants of each kernel. So here BEAM searches only the slowest
# kernel of the step profiled above, on copies of its buffers, and we compare it with the heuristic's version
# and estimate what that saves per step. Even this one search takes a minute or more on a small CPU, so the
# quick run (`LAZYNB_QUICK=1`) skips it; Project 5's notebook runs BEAM on a matmul in every mode.
#
# BEAM picks the candidate that was fastest *when it timed them*. In the recorded full run it kept the heuristic's
# opts, and the race below timed them 41.09 ms against 41.38 ms: the same kernel, within timing noise. On a busy
# machine its pick can race slower than the heuristic's kernel (an earlier record, made while three other jobs ran,
# saw it about a quarter slower), because timing noise misleads the search, which is why the cell below races the
# two again rather than trusting the search's own numbers.

# %%
from lazynb.codegen import get_program
from lazynb.device import Buffer
from lazynb.engine.realize import CompiledRunner
hot = max(execs, key=lambda d: d["seconds"])
item = hot["item"]
def copy_of(b):   # the timing runs write into copies, never into buffers the model uses
  host = np.empty(b.nbytes, np.uint8); b.copyout(memoryview(host))
  nb = Buffer(b.device, b.size, b.dtype).allocate(); nb.copyin(memoryview(host)); return nb
scratch = [copy_of(b) for b in item.bufs]
renderer = Device[item.bufs[0].device].renderer
def best_of(runner, reps=3): return min(runner(scratch) for _ in range(reps))
q_beam = quiz("BEAM=1 on this kernel: the kernel it picks will be...", ["never slower than the heuristic's, up to timing noise", "always 10x faster", "slower"],
              key="p04_mnist.q_beam")

# %%
%%tinygrad --show timing
if QUICK: print("quick run: the BEAM search is skipped (set LAZYNB_QUICK=0 to run it)")
else:
  heuristic = CompiledRunner(get_program(item.ast, renderer))
  with Context(BEAM=1): searched = CompiledRunner(get_program(item.ast, renderer))
  t_heur, t_beam = best_of(heuristic), best_of(searched)

# %%
if not QUICK:
  print(f"{hot['name']}: heuristic {t_heur * 1e3:.2f} ms {heuristic.p.opts}")
  print(f"{' ' * len(hot['name'])}  BEAM=1    {t_beam * 1e3:.2f} ms {searched.p.opts}")
  share, saved = hot["seconds"] / total, 1 - t_beam / t_heur
  print(f"this kernel is {share:.0%} of the step's kernel time, so BEAM on it alone would cut a step's kernel time by about {share * saved:.0%}")
  assert t_beam <= 1.5 * t_heur + 5e-4
  q_beam.reveal()

# %% [markdown]
# ## Evaluation

# %%
def evaluate(m, X, Y, bs=1000):
  correct = 0
  with Tensor.inference_mode():   # BatchNorm uses its running statistics; no gradients
    for i in range(0, X.shape[0], bs):
      correct += (m(X[i:i + bs].float() / 255.0).argmax(axis=1) == Y[i:i + bs]).sum().item()
  return correct / X.shape[0]

acc = evaluate(model, X_test, Y_test)
print(f"test accuracy {acc:.2%} on {X_test.shape[0]} images (needs > {MIN_ACC:.0%})")
assert acc > MIN_ACC

# %% [markdown]
# ## Save, reload, compare
#
# `safe_save` writes every tensor of `get_state_dict(model)` to a safetensors file; `load_state_dict` copies
# them into a freshly built model.

# %%
q_reload = quiz("The reloaded model is evaluated on the same test images. Its accuracy is...",
                ["identical", "within 0.1%", "a bit lower: saving rounds the weights"], key="p04_mnist.q_reload")

# %%
path = os.path.join(tempfile.mkdtemp(), "mnist.safetensors")
safe_save(get_state_dict(model), path)
fresh = Model(WIDTH)
load_state_dict(fresh, safe_load(path))
acc2 = evaluate(fresh, X_test, Y_test)
print(f"saved {os.path.getsize(path):,} bytes; reloaded model: {acc2:.2%}")
assert acc2 == acc
q_reload.reveal("identical" if acc2 == acc else "within 0.1%")

# %% [markdown]
# ## Exercise: cross-entropy from scratch
#
# Write `cross_entropy(logits, labels)` for logits `(N, C)` and integer labels `(N,)`: the mean over rows of
# `-log(softmax(logits)[label])`, without `sparse_categorical_crossentropy`, `log_softmax`, `softmax` or `logsumexp` (they
# are switched off during the check). It must survive logits of 1000 (no inf or nan); the check compares the loss and
# its gradient with numpy.

# %%
# EXERCISE p04.cross_entropy
def cross_entropy(logits, labels):
  # YOUR CODE: a stable log-softmax, then pick each row's label (a one-hot mask from arange helps)
  raise NotImplementedError

# %%
from lazynb.notebook.exercise import check
check("p04.cross_entropy", cross_entropy)
