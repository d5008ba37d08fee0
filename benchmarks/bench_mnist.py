"""Training speed of the course's MNIST CNN: lazynb next to PyTorch (CPU) and tinygrad (when importable), same model, same batches.

    LAZYNB_DATA=../shared/data PYTHONPATH=. python benchmarks/bench_mnist.py [--steps 20] [--batch 512]

Each framework trains in its own child process: the CNN of examples/mnist.py (Conv2d 5x5 x2, BatchNorm,
max_pool2d, Conv2d 3x3 x2, BatchNorm, max_pool2d, Linear), Adam lr 0.005, a TinyJit'd step, the same
random batches (numpy seed 0, images read with lazynb's MNIST reader). Reported: seconds per step over the
steps after the JIT has captured (steps 3..N), kernels per step, and the loss after N steps (both should fall
from about 2.3). Accuracy is examples/mnist.py's job; this is about speed.

PyTorch runs the same layers eagerly (torch.nn Conv2d/BatchNorm2d/max_pool2d/Linear, cross_entropy, torch.optim.Adam
lr 0.005) with torch.set_num_threads set to the thread count lazynb's CPU runtime uses (THREADS, default
min(nproc, 8)); "kernels/step" is not meaningful there and reads 0. The ratio column is lazynb's speed as a
fraction of PyTorch's (torch s/step / lazynb s/step), measured in the same run.

`--profile` instead times one lazynb step without TinyJit, kernel by kernel (each re-run, fastest kept), and prints the
biggest kernels: where a step goes (docs/benchmarks.md, MNIST CNN).
"""
from __future__ import annotations
import argparse, importlib.util, json, os, subprocess, sys, time
import numpy as np
from benchenv import environment_lines, loadavg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def batches(steps: int, batch: int):
  if ROOT not in sys.path: sys.path.insert(0, ROOT)
  from lazynb.nn.datasets import mnist
  X, Y, _, _ = mnist()
  xs, ys = X.numpy(), Y.numpy().astype(np.int32)
  rng = np.random.default_rng(0)
  for _ in range(steps):
    idx = rng.integers(0, xs.shape[0], batch)
    yield xs[idx], ys[idx]

def course_cnn(Tensor, nn, get_parameters):
  """The course's CNN (beautiful_mnist's shape) and its Adam, from the given framework's Tensor and nn (lazynb or tinygrad)."""
  Tensor.manual_seed(42)
  w = 32
  layers = [nn.Conv2d(1, w, 5), Tensor.relu, nn.Conv2d(w, w, 5), Tensor.relu, nn.BatchNorm(w), Tensor.max_pool2d,
            nn.Conv2d(w, 2 * w, 3), Tensor.relu, nn.Conv2d(2 * w, 2 * w, 3), Tensor.relu, nn.BatchNorm(2 * w), Tensor.max_pool2d,
            lambda x: x.flatten(1), nn.Linear(2 * w * 3 * 3, 10)]
  return layers, nn.optim.Adam(get_parameters(layers), lr=0.005)

def train(framework: str, steps: int, batch: int) -> dict:
  data = list(batches(steps, batch))  # read before importing the framework under test
  if framework == "torch": return train_torch(data, steps, batch)
  if framework == "lazynb":
    from lazynb import Tensor, TinyJit, GlobalCounters, nn
    from lazynb.nn.state import get_parameters
    train_mode = Tensor.train
  else:
    from tinygrad import Tensor, TinyJit, GlobalCounters, nn, Context  # type: ignore
    from tinygrad.nn.state import get_parameters  # type: ignore
    train_mode = lambda: getattr(Tensor, "train", None) and Tensor.train() or Context(TRAINING=1)  # noqa: E731  (0.14: a ContextVar)
  layers, opt = course_cnn(Tensor, nn, get_parameters)

  @TinyJit
  def step(x, y):
    with train_mode():
      opt.zero_grad()
      loss = x.float().div(255.0).sequential(layers).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss

  times, losses, kernels = [], [], 0
  for xb, yb in data:
    GlobalCounters.reset()
    st = time.perf_counter()
    losses.append(step(Tensor(xb), Tensor(yb)).item())
    times.append(time.perf_counter() - st)
    kernels = GlobalCounters.kernel_count
  steady = times[2:] or times
  return {"framework": framework, "steps": steps, "batch": batch, "s_per_step": float(np.median(steady)), "first_steps_s": times[:2],
          "kernels_per_step": kernels, "loss_first": losses[0], "loss_last": float(np.mean(losses[-3:]))}

def profile_lazynb(batch: int, top: int = 8) -> None:
  """One training step without TinyJit, traced: every kernel it runs, re-run twice and its fastest time kept (a busy
  machine inflates single runs), the biggest `top` printed with GFLOPS and output size; then the step's totals."""
  if ROOT not in sys.path: sys.path.insert(0, ROOT)
  from lazynb import Tensor, nn, trace
  from lazynb.nn.state import get_parameters
  from lazynb.engine.realize import get_runner
  (xb, yb), = list(batches(1, batch))
  layers, opt = course_cnn(Tensor, nn, get_parameters)
  def step():
    with Tensor.train():
      opt.zero_grad()
      loss = Tensor(xb).float().div(255.0).sequential(layers).sparse_categorical_crossentropy(Tensor(yb))
      loss.backward()
      opt.step()
      return loss.item()
  step()  # compile
  with trace.Recorder(rewrites=False) as rec:
    st = time.perf_counter()
    step()
    wall = time.perf_counter() - st
  rows = []
  for e in rec.of("exec"):
    d = e.data
    if d["kind"] != "kernel": continue
    si = d["item"]
    runner = get_runner(si.bufs[0].device, si.ast)
    t = min([d["seconds"]] + [runner(list(si.bufs), si.var_vals) for _ in range(2)])
    rows.append((t, d["name"], d["op_estimate"], si.bufs[0].nbytes))
  biggest = max(b.nbytes for e in rec.of("exec") for b in e.data["bufs"])
  print(f"one step, batch {batch}, no JIT: {len(rows)} kernels, {sum(r[0] for r in rows):.2f} s in kernels (fastest of 3 runs each), "
        f"{wall:.2f} s wall, largest buffer {biggest / 1e6:.0f} MB")
  for t, name, ops, out in sorted(rows, reverse=True)[:top]:
    print(f"  {name:36s} {t * 1e3:8.1f} ms {ops / t / 1e9:7.1f} GFLOPS  output {out / 1e6:6.1f} MB")

def lazynb_threads() -> int:
  """The thread count lazynb's CPU device uses (lazynb/runtime/ops_cpu.py: THREADS, default min(nproc, 8))."""
  return int(os.environ.get("THREADS") or min(os.cpu_count() or 1, 8))

def train_torch(data, steps: int, batch: int) -> dict:
  import torch
  import torch.nn.functional as F
  torch.set_num_threads(lazynb_threads())
  torch.manual_seed(42)
  w = 32
  model = torch.nn.Sequential(torch.nn.Conv2d(1, w, 5), torch.nn.ReLU(), torch.nn.Conv2d(w, w, 5), torch.nn.ReLU(), torch.nn.BatchNorm2d(w),
                              torch.nn.MaxPool2d(2), torch.nn.Conv2d(w, 2 * w, 3), torch.nn.ReLU(), torch.nn.Conv2d(2 * w, 2 * w, 3),
                              torch.nn.ReLU(), torch.nn.BatchNorm2d(2 * w), torch.nn.MaxPool2d(2), torch.nn.Flatten(1),
                              torch.nn.Linear(2 * w * 3 * 3, 10))
  model.train()
  opt = torch.optim.Adam(model.parameters(), lr=0.005)
  times, losses = [], []
  for xb, yb in data:
    st = time.perf_counter()
    x, y = torch.from_numpy(xb), torch.from_numpy(yb).long()
    opt.zero_grad()
    loss = F.cross_entropy(model(x.float().div(255.0)), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    times.append(time.perf_counter() - st)
  steady = times[2:] or times
  return {"framework": f"torch {torch.__version__} ({torch.get_num_threads()} thr)", "steps": steps, "batch": batch,
          "s_per_step": float(np.median(steady)), "first_steps_s": times[:2], "kernels_per_step": 0, "loss_first": losses[0],
          "loss_last": float(np.mean(losses[-3:]))}

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--steps", type=int, default=20)
  ap.add_argument("--batch", type=int, default=512)
  ap.add_argument("--child", choices=["lazynb", "torch", "tinygrad"], help=argparse.SUPPRESS)
  ap.add_argument("--profile", action="store_true", help="only profile one lazynb step: its biggest kernels, no comparison")
  args = ap.parse_args()
  if args.profile:
    print("\n".join(environment_lines()), flush=True)
    profile_lazynb(args.batch)
    return
  if args.child: print(json.dumps(train(args.child, args.steps, args.batch))); return
  print("\n".join(environment_lines()), flush=True)
  rows, sps = [], {}
  fws = ["lazynb"] + (["torch"] if importlib.util.find_spec("torch") else []) + (["tinygrad"] if importlib.util.find_spec("tinygrad") else [])
  for fw in fws:
    print(f"{fw} ...", file=sys.stderr, flush=True)
    p = subprocess.run([sys.executable, __file__, "--child", fw, "--steps", str(args.steps), "--batch", str(args.batch)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT, **({"CPU": "1"} if fw == "tinygrad" else {})})
    if p.returncode != 0: rows.append(f"{fw:9s} FAILED: {(p.stderr.strip().splitlines() or ['?'])[-1]}"); continue  # noqa: E702
    r = json.loads(p.stdout.strip().splitlines()[-1])
    sps[fw] = r["s_per_step"]
    rows.append(f"{fw:9s} {r['s_per_step']:7.2f} s/step  {1 / r['s_per_step']:6.3f} steps/s  {r['kernels_per_step']:4d} kernels/step  "
                f"loss {r['loss_first']:.2f} -> {r['loss_last']:.3f}  (first two steps {r['first_steps_s'][0]:.1f} s, {r['first_steps_s'][1]:.1f} s)"
                + (f"  [{r['framework']}]" if fw == "torch" else ""))
  if not importlib.util.find_spec("tinygrad"): rows.append("tinygrad  not installed (pip install tinygrad) - no comparison")
  print(f"MNIST CNN, batch {args.batch}, {args.steps} steps, Adam lr 0.005, TinyJit; median over steps 3..{args.steps}")
  print("\n".join(rows))
  if "lazynb" in sps and "torch" in sps:
    print(f"lazynb / PyTorch speed: {sps['torch'] / sps['lazynb']:.3f}x (goal >= 0.5x); load average after: {loadavg()}")

if __name__ == "__main__":
  main()
