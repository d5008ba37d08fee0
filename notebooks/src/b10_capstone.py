# %% [markdown]
# # Build capstone: MNIST on your compiler
#
# Every stage you kept in the build notebooks runs here at once, with your gradient rules and your Adam if you kept them: the course's MLP (784 inputs, 128 hidden units
# with relu, 10 outputs; Adam) trains on MNIST with each kernel going through your stages instead of lazynb's. Then
# your stages (and your optimizer) are assembled into one file, `my_compiler.py`, graded again from that file alone.
#
# Stages you have not written yet stay lazynb's; the next cell lists which are which. With nothing kept, this
# notebook trains on lazynb's own stages (with `NOOPT=1`, as the build track always runs).
#
# `LAZYNB_QUICK=1` trains for fewer steps (the test suite runs it that way); the full run trains for five epochs.

# %%
import importlib.util, os, time
import numpy as np
from lazynb import Tensor, TinyJit, nn, pipeline
from lazynb.nn.state import get_parameters
from lazynb.notebook.build import kept, kept_pieces, mine, assemble, regrade, build_dir
yours, pieces = kept(), kept_pieces()
print("your stages:   ", ", ".join(yours) or "none yet", f"(kept in {build_dir()})")
print("lazynb's stages:", ", ".join(n for n in pipeline.stages() if n not in yours))
Optimizer = pieces.get("optimizer", nn.optim.Adam)  # yours, if Build 5 kept it
print("optimizer:      ", "yours," if "optimizer" in pieces else "lazynb's", Optimizer.__name__)
QUICK = os.environ.get("LAZYNB_QUICK", "0") == "1"
STEPS, BATCH, LR, MIN_ACC = (900, 128, 2e-3, 0.95) if QUICK else (5 * 60_000 // 128, 128, 2e-3, 0.97)
print(f"{'quick' if QUICK else 'full'} run: {STEPS} steps of {BATCH} images, Adam lr {LR}, needs {MIN_ACC:.0%} test accuracy")

# %% [markdown]
# ## The data and the model
#
# The images become rows of 784 floats in [0, 1]; the model is two `nn.Linear` layers. Nothing here knows which
# stages will run it.

# %%
X_train, Y_train, X_test, Y_test = nn.datasets.mnist()
xs, ys = (X_train.numpy().reshape(-1, 784) / 255.0).astype(np.float32), Y_train.numpy().astype(np.int32)
xt, yt = (X_test.numpy().reshape(-1, 784) / 255.0).astype(np.float32), Y_test.numpy()

class MLP:
  def __init__(self): self.l1, self.l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  def __call__(self, x: Tensor) -> Tensor: return self.l2(self.l1(x).relu())

Tensor.manual_seed(0)
model = MLP()
opt = Optimizer(get_parameters(model), lr=LR)

@TinyJit
def train_step(x: Tensor, y: Tensor) -> Tensor:
  with Tensor.train():
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()
    return loss

# %% [markdown]
# ## Training on your stages
#
# `TinyJit` captures the kernels of the first calls, made by your stages, and replays them: every step runs code
# your renderer wrote, your compiler compiled and your loader loaded.

# %%
rng = np.random.default_rng(0)
start, losses = time.perf_counter(), []
with mine():
  for i in range(STEPS):
    idx = rng.integers(0, len(xs), BATCH)
    losses.append(train_step(Tensor(xs[idx]), Tensor(ys[idx])).item())
    if i % max(1, STEPS // 6) == 0 or i == STEPS - 1: print(f"step {i:5d}  loss {losses[-1]:.3f}  {time.perf_counter() - start:6.1f} s")
  with Tensor.inference_mode():
    accuracy = float((model(Tensor(xt)).argmax(axis=1).numpy() == yt).mean())
print(f"test accuracy {accuracy:.2%} after {STEPS} steps in {time.perf_counter() - start:.0f} s")
assert accuracy >= MIN_ACC, f"test accuracy {accuracy:.2%} is below {MIN_ACC:.0%}"

# %% [markdown]
# ## Your compiler in one file
#
# `assemble()` puts your kept stages into one module, `my_compiler.py`, in pipeline order. Loaded on its own and
# graded again, part by part, by the exercises that kept them (the stages on the same generated programs):

# %%
if yours:
  path = assemble()
  lines = [l for l in path.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]
  print(f"{path}: {len(lines)} lines of code")
  spec = importlib.util.spec_from_file_location("my_compiler", path)
  my_compiler = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(my_compiler)
  for name, fn in my_compiler.PARTS.items():
    ok, message = regrade(name, fn)  # the exercise that kept it, once more, on what the file defines
    print(f"  {name}: " + ("\u2713 passes its exercise again" if ok else f"\u2717 {message}"))
else: print("nothing kept yet: the build notebooks keep each stage whose check passes")

# %% [markdown]
# What you wrote is most of a compiler: the graph's hash-consing and toposort, the decision of what becomes a
# kernel, one kernel opt with a search, the views' index math, the simplify rules, the linearizer, the renderer, the
# runtime, and the gradient rules and optimizer that train the model. What lazynb still does for you in this run: the
# Tensor front end that builds the lazy graph, turning your kernel decision into kernel ASTs, the rest of the lower
# stage around your index math, and launching each kernel (the run stage).
