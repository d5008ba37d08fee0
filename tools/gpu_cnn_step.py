"""One training step of the course CNN (examples/mnist.py's Model, Adam) on a device, checked against the CPU device: the
same initial weights and batch give the same loss and the same gradients (to float32 rounding), and the step moves every
weight. tools/gpu_check.sh runs it on each GPU device it finds.

Usage: python3 tools/gpu_cnn_step.py CUDA [--batch 32] [--width 32]   (prints one line; exit status 0 when it matches)"""
import argparse, pathlib, sys
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]
from lazynb import Tensor, Device, nn  # noqa: E402
from lazynb.nn.state import get_parameters, get_state_dict  # noqa: E402
from mnist import Model  # noqa: E402  the course's CNN, as examples/mnist.py trains it

def step(device: str, weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, width: int):
  """The loss, each parameter's gradient and its value after one Adam step, all as numpy, computed on `device`."""
  Device.DEFAULT = device
  model = Model(width)
  params = get_state_dict(model)
  for k, t in params.items(): t.assign(Tensor(weights[k], device=device)).realize()
  opt = nn.optim.Adam(get_parameters(model), lr=0.005)  # as the course: the BatchNorm statistics too (the step realizes them)
  with Tensor.train():
    opt.zero_grad()
    loss = model(Tensor(x, device=device).float() / 255.0).sparse_categorical_crossentropy(Tensor(y, device=device))
    loss.backward()
    grads = {k: t.grad.numpy() for k, t in params.items() if t.grad is not None}
    opt.step()
  return loss.item(), grads, {k: t.numpy() for k, t in params.items()}

def main(argv=None) -> int:
  ap = argparse.ArgumentParser()
  ap.add_argument("device")
  ap.add_argument("--batch", type=int, default=32)
  ap.add_argument("--width", type=int, default=32)
  args = ap.parse_args(argv)
  rng = np.random.default_rng(0)
  x, y = rng.integers(0, 256, (args.batch, 1, 28, 28)).astype(np.uint8), rng.integers(0, 10, args.batch).astype(np.int32)
  Tensor.manual_seed(0)
  Device.DEFAULT = "CPU"
  weights = {k: t.numpy() for k, t in get_state_dict(Model(args.width)).items()}
  ref_loss, ref_grads, before = step("CPU", weights, x, y, args.width)
  try: loss, grads, after = step(args.device, weights, x, y, args.width)
  except Exception as e:
    print(f"CNN step on {args.device}: FAILED ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
    return 1
  bad = [] if np.isclose(loss, ref_loss, rtol=1e-4) else [f"loss {loss:.6f} (CPU {ref_loss:.6f})"]
  for k, g in ref_grads.items():  # gradients: float32 sums in another order, so to a tolerance of the gradient's own size
    if k not in grads or not np.allclose(grads[k], g, rtol=1e-3, atol=1e-3 * float(np.abs(g).max(initial=0)) + 1e-7):
      bad.append(f"gradient of {k}")
  bad += [f"{k} did not move" for k in ref_grads if np.array_equal(after[k], weights[k])]
  bad += [f"{k} is not finite" for k, v in after.items() if not np.isfinite(v).all()]
  print(f"CNN step on {args.device}: " + (f"ok (loss {loss:.4f}, CPU {ref_loss:.4f}; {len(grads)} gradients match)" if not bad else
                                          "FAILED: " + ", ".join(bad[:5])))
  return 1 if bad else 0

if __name__ == "__main__": sys.exit(main())
