"""Patterns whose kernel counts lazynb and tinygrad 0.10 are compared on (tests/test_fusion_parity.py).

Run as a script with the library to measure: `python tests/fusion_patterns.py lazynb` (or `tinygrad`). It prints one
JSON object: pattern name -> [kernels in the schedule, the values as a list]. Every pattern is written once and
runs unchanged on both libraries: the learner's promise is that tinygrad code runs with `tinygrad` replaced by `lazynb`.
"""
import importlib, json, sys
import numpy as np

def patterns(Tensor, nn):
  rng = np.random.default_rng(0)
  a = Tensor(rng.standard_normal((3, 4)).astype(np.float32)).realize()
  b = Tensor(rng.standard_normal((2, 3, 4)).astype(np.float32)).realize()
  x = Tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32)).realize()
  w = Tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32)).realize()
  return {
    # movement ops only change how a kernel indexes memory
    "double transpose": lambda: a.T.T + 1,
    "transpose, contiguous": lambda: a.T.contiguous(),
    "permute into a reduce": lambda: a.permute(1, 0).sum(1),
    "permute of a lazy value into a reduce": lambda: (a + 1).permute(1, 0).sum(1),
    "double permute, 3d": lambda: (b * 3).permute(2, 0, 1).permute(1, 2, 0).contiguous(),
    "flip": lambda: a.flip(0) + a,
    "pad": lambda: a.pad(((1, 1), (1, 1))) + 1,
    "cat": lambda: a.cat(a, dim=0) * 2,
    # a reduce read through a view that is a reshape in disguise joins its consumer
    "reduce, reshape, transpose": lambda: a.sum(1).reshape(3, 1).T + 1,
    "reduce, transposed twice": lambda: b.sum(2).T.T * 2,
    "reduce then expand": lambda: a - a.max(1, keepdim=True),
    "reduce of a reduce": lambda: b.sum(2).sum(),
    "sum over one axis, then another": lambda: (b + b).sum(1).sum(0),
    "max of a keepdim max": lambda: b.max(2, keepdim=True).max(0),
    # a reduce read permuted: the permute moves onto the reduce's input, and the reduce joins its consumer
    "reduce, permuted, plus a buffer": lambda: b.sum(0, keepdim=True).permute(2, 1, 0) + a.T.reshape(4, 3, 1),
    "reduce, axis dropped, transposed, plus a buffer": lambda: b.sum(0).T + a.T,
    "reduce plus one, transposed, times two": lambda: (b.sum(0) + 1).T * 2,
    "reduce plus two, transposed there and back": lambda: (b.sum(2, keepdim=True).permute(1, 0, 2) + 2).permute(1, 0, 2).contiguous(),
    # constants fold: no kernel at all
    "constants only": lambda: Tensor.ones(3, 4) * 2 + 1,
    "full": lambda: Tensor.full((3, 3), 7.0),
    "zeros": lambda: Tensor.zeros(3, 3),
    "sum of ones": lambda: Tensor.ones(4, 4).sum(),
    "conv of constants": lambda: Tensor.ones(1, 1, 5, 5).conv2d(Tensor.ones(2, 1, 3, 3)),
    "constant plus a buffer": lambda: Tensor.ones(3, 4) + a,
    "arange alone": lambda: Tensor.arange(10),
    "arange times 2": lambda: Tensor.arange(10) * 2,
    # the course's networks
    "matmul": lambda: a @ a.T,
    "matmul + relu": lambda: (a @ a.T).relu(),
    "matmul of a lazy transpose": lambda: (a + 1).T @ a,
    "softmax": lambda: a.softmax(),
    "log_softmax": lambda: a.log_softmax(),
    "layernorm": lambda: a.layernorm(),
    "mean and variance": lambda: ((a - a.mean()) ** 2).mean(),
    "std": lambda: a.std(),
    "two reduces of one input": lambda: a.sum() + a.max(),
    "argmax": lambda: a.argmax(1),
    "cumsum": lambda: a.cumsum(1),
    "where, sum": lambda: (a > 0).where(a, 0).sum(),
    "conv2d": lambda: x.conv2d(w),
    "conv2d + relu": lambda: x.conv2d(w).relu(),
    "conv2d, max_pool2d": lambda: x.conv2d(w, padding=1).max_pool2d(),
    "sparse_categorical_crossentropy": lambda: a.sparse_categorical_crossentropy(Tensor([0, 1, 2])),
    # no elements: nothing to compute
    "zero-size elementwise": lambda: (Tensor.empty(2, 3, 0) + 1).cast("int32"),
    "zero-size reduce": lambda: Tensor.empty(0, 4).exp().sum(1),
  }

def adam_step(Tensor, nn, lib, run: bool):
  """One Adam step of a Linear layer whose loss and gradients are already realized: the optimizer's own kernels
  (run=False), or the parameters after the step (run=True)."""
  layer = nn.Linear(4, 3)
  layer.weight = Tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)  # the same start for both
  layer.bias = Tensor(np.array([0.1, -0.2, 0.3], np.float32), requires_grad=True)
  params = nn.state.get_parameters(layer)
  opt = nn.optim.Adam(params)
  Tensor.realize(*params) if lib == "tinygrad" else params[0].realize(*params[1:])
  a = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
  with Tensor.train():
    loss = layer(a).sum()
    opt.zero_grad()
    loss.backward()
    grads = [p.grad for p in params]
    Tensor.realize(loss, *grads) if lib == "tinygrad" else loss.realize(*grads)
    if run:
      opt.step()
      return [p.numpy().tolist() for p in params]
    step = opt.schedule_step()
    items = Tensor.schedule(*step) if lib == "tinygrad" else step[0].schedule(*step[1:])
    # kernels only (tinygrad moves the learning rate to the device with a COPY)
    return sum(1 for si in items if (si.ast.op.name == "SINK" if lib == "tinygrad" else si.kind == "kernel"))

if __name__ == "__main__":
  lib = sys.argv[1]
  m = importlib.import_module(lib)
  nn = importlib.import_module(lib + ".nn")
  out = {}
  for name, f in patterns(m.Tensor, nn).items():
    out[name] = [len(f().schedule()), f().numpy().tolist()]  # (a tinygrad tensor that was scheduled is not run)
  out["Adam step"] = [adam_step(m.Tensor, nn, lib, False), adam_step(m.Tensor, nn, lib, True)]
  print(json.dumps(out))
