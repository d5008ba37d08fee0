"""Train the course's MNIST CNN (Conv2d, BatchNorm, relu, max_pool2d, Linear; Adam) with lazynb.

  LAZYNB_DATA=../shared/data python examples/mnist.py [--steps 200] [--batch 512] [--subset N] [--out model.safetensors] [--sample-in-jit]

--sample-in-jit trains the way tinygrad's beautiful_mnist does: the jitted step draws its own batch,
`samples = Tensor.randint(BS, high=X_train.shape[0])`, and gathers `X_train[samples]` (a one-hot sum that the
compiler folds into a gather). Without it, the batch is drawn with numpy and passed in.

Prints a progress bar with the loss and, every --eval-every steps, the accuracy on the first 2,000 test
images; at the end the accuracy on the whole test set. Saves the weights with safe_save, reloads them into a
fresh model, and checks the reloaded model gets the identical accuracy.
"""
from __future__ import annotations
import argparse, sys, time
import numpy as np
from lazynb import Tensor, TinyJit, GlobalCounters, nn
from lazynb.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load

class Model:
  def __init__(self, width: int = 32):
    w = width
    self.layers = [
      nn.Conv2d(1, w, 5), Tensor.relu, nn.Conv2d(w, w, 5), Tensor.relu, nn.BatchNorm(w), Tensor.max_pool2d,
      nn.Conv2d(w, 2 * w, 3), Tensor.relu, nn.Conv2d(2 * w, 2 * w, 3), Tensor.relu, nn.BatchNorm(2 * w), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(2 * w * 3 * 3, 10)]
  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)

def evaluate(model: Model, X: Tensor, Y: Tensor, batch: int = 1000) -> float:
  correct = 0
  with Tensor.inference_mode():
    for i in range(0, X.shape[0], batch):
      xb = X[i:i + batch].float() / 255.0
      correct += (model(xb).argmax(axis=1) == Y[i:i + batch]).sum().item()
  return correct / X.shape[0]

def bar(i: int, n: int, width: int = 30) -> str:
  done = (i * width) // n
  return "[" + "#" * done + "." * (width - done) + f"] {i}/{n}"

def main(argv=None) -> dict:
  ap = argparse.ArgumentParser()
  ap.add_argument("--steps", type=int, default=200)
  ap.add_argument("--batch", type=int, default=512)
  ap.add_argument("--lr", type=float, default=0.005)
  ap.add_argument("--width", type=int, default=32)
  ap.add_argument("--subset", type=int, default=0, help="train on the first N images only (for quick runs)")
  ap.add_argument("--test-subset", type=int, default=0)
  ap.add_argument("--out", default="mnist.safetensors")
  ap.add_argument("--seed", type=int, default=42)
  ap.add_argument("--eval-every", type=int, default=50, help="steps between accuracy checks on 2,000 test images (0: none)")
  ap.add_argument("--sample-in-jit", action="store_true", help="draw each batch inside the jitted step (tinygrad's beautiful_mnist)")
  args = ap.parse_args(argv)

  Tensor.manual_seed(args.seed)
  X_train, Y_train, X_test, Y_test = nn.datasets.mnist()
  if args.subset: X_train, Y_train = X_train[:args.subset], Y_train[:args.subset]
  if args.test_subset: X_test, Y_test = X_test[:args.test_subset], Y_test[:args.test_subset]
  X_train, Y_train, X_test, Y_test = [t.realize() for t in (X_train, Y_train, X_test, Y_test)]
  model = Model(args.width)
  opt = nn.optim.Adam(get_parameters(model), lr=args.lr)

  def step(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = model(x.float() / 255.0).sparse_categorical_crossentropy(y)
      loss.backward()
      opt.step()
      return loss

  train_step = TinyJit(step)

  @TinyJit
  def train_step_sampled() -> Tensor:
    samples = Tensor.randint(args.batch, high=X_train.shape[0])  # a new batch on every call, replays included
    return step(X_train[samples], Y_train[samples])

  rng = np.random.default_rng(args.seed)
  n = X_train.shape[0]
  xs, ys = X_train.numpy(), Y_train.numpy()
  st, kernels_per_step, loss, acc_note, eval_s = time.perf_counter(), 0, float("nan"), "", 0.0
  X_peek, Y_peek = X_test[:2000], Y_test[:2000]
  for i in range(args.steps):
    GlobalCounters.reset()
    if args.sample_in_jit: loss = train_step_sampled().item()
    else:
      idx = rng.integers(0, n, args.batch)
      loss = train_step(Tensor(xs[idx]), Tensor(ys[idx])).item()
    kernels_per_step = GlobalCounters.kernel_count
    if args.eval_every and ((i + 1) % args.eval_every == 0 or i + 1 == args.steps):
      t = time.perf_counter()
      acc_note = f"  acc {evaluate(model, X_peek, Y_peek) * 100:.2f}% (first {X_peek.shape[0]} test images)"
      eval_s += time.perf_counter() - t
    el = time.perf_counter() - st - eval_s
    print(f"\r{bar(i + 1, args.steps)} loss {loss:.3f}  {(i + 1) / el:.2f} steps/s{acc_note}", end="", file=sys.stderr)
  train_s = time.perf_counter() - st - eval_s  # training only: the accuracy checks are not counted
  acc = evaluate(model, X_test, Y_test)
  print(f"\ntest accuracy {acc * 100:.2f}%  ({train_s:.1f} s, {args.steps / train_s:.2f} steps/s, {kernels_per_step} kernels/step)", file=sys.stderr)

  safe_save(get_state_dict(model), args.out)
  fresh = Model(args.width)
  load_state_dict(fresh, safe_load(args.out))
  acc2 = evaluate(fresh, X_test, Y_test)
  print(f"reloaded from {args.out}: test accuracy {acc2 * 100:.2f}% ({'identical' if acc2 == acc else 'DIFFERENT'})", file=sys.stderr)
  return {"accuracy": acc, "reloaded_accuracy": acc2, "sample_in_jit": args.sample_in_jit, "train_seconds": train_s, "steps": args.steps,
          "steps_per_second": args.steps / train_s, "kernels_per_step": kernels_per_step, "loss": loss}

if __name__ == "__main__":
  r = main()
  sys.exit(0 if r["accuracy"] == r["reloaded_accuracy"] else 1)
