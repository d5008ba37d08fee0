"""Making tensors: from host data (numpy arrays, lists, Python numbers), constants (full, zeros, ones, the *_like
family), fresh memory (empty), random numbers (rand, randn, randint, uniform, normal, randperm; one seeded generator,
manual_seed) and number lines (arange, eye). Functions of a Tensor, or of the class
(`cls: type[Tensor]`): tensor.py makes them Tensor's methods, so `Tensor.rand(...)` calls them on the class."""
from __future__ import annotations
import ctypes, hashlib, math
from typing import Callable, TYPE_CHECKING
import numpy as np
from lazynb.dtype import DType, dtypes, to_dtype, int_fits, to_storage, wrap_int, fp8_unsupported
from lazynb.device import Device, ExternalBuffer
from lazynb.helpers import prod, unwrap
from lazynb.uop.ops import UOp, Ops, variables, sym_canon
from lazynb.engine.schedule import new_buffer
from lazynb.engine.realize import write_host
from lazynb.runstate import state
from lazynb.shape.sizes import shape_arg as _shape_arg, check_shape as _check_shape, sym_ge as _ge
if TYPE_CHECKING: from lazynb.tensor import Tensor


class _RNG:
  """tinygrad 0.10's random stream, so a seeded example prints tinygrad's digits: each device that draws gets a key (the
  first 32 bits of sha256 of how many devices drew before it, and the seed) and a counter of 32-bit words; a draw of n
  words first moves the counter on by n (not on the device's first draw), then encrypts the counters with Threefry."""
  seed: int = 0
  devices: dict[str, list[int]] = {}  # device -> [key0, key1, counter]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
def _threefry2x32(x0: np.ndarray, x1: np.ndarray, k0: int, k1: int) -> tuple[np.ndarray, np.ndarray]:
  """Threefry-2x32, 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011): a block cipher on
  pairs of 32-bit words. Keyed with (k0, k1), a counter pair encrypts to a pair of random words. uint32 numpy wraps."""
  u32 = np.uint32
  ks = (u32(k1), u32(k0 ^ k1 ^ 0x1BD11BDA), u32(k0))  # the key schedule: the two words and their parity
  a, b = x0 + ks[2], x1 + ks[0]
  for i in range(5):  # five groups of four rounds, a key injection after each
    for r in _ROTATIONS[i % 2]:
      a = a + b
      b = ((b << u32(r)) | (b >> u32(32 - r))) ^ a
    a, b = a + ks[i % 3], b + ks[(i + 1) % 3] + u32(i + 1)
  return a, b

def _threefry_random_bits(cls: type[Tensor], key: Tensor, counts0: Tensor, counts1: Tensor) -> Tensor:
  """tinygrad 0.10's Tensor._threefry_random_bits: the pairs (counts0[i], counts1[i]) encrypted with key = (key0, key1)
  by Threefry-2x32, the low words then the high ones (uint32). Computed on the host, as lazynb draws its numbers."""
  k0, k1 = (int(v) for v in key.numpy().astype(np.uint32))
  lo, hi = _threefry2x32(counts0.numpy().astype(np.uint32), counts1.numpy().astype(np.uint32), k0, k1)
  return cls(np.concatenate([lo, hi]), device=key.device, dtype=dtypes.uint32)

def _random_words(n: int, device: str) -> np.ndarray:
  """The next n random 32-bit words of the device's stream (see _RNG)."""
  if (st := _RNG.devices.get(device)) is None:
    key0 = int.from_bytes(hashlib.sha256(len(_RNG.devices).to_bytes(4, "big")).digest(), "big") & 0xFFFFFFFF
    st = _RNG.devices[device] = [key0, _RNG.seed & 0xFFFFFFFF, 0]
  else: st[2] = (st[2] + n) & 0xFFFFFFFF
  half = -(-n // 2)
  c0 = np.arange(half, dtype=np.uint32) + np.uint32(st[2])
  lo, hi = _threefry2x32(c0, c0 + np.uint32(half), st[0], st[1])
  return np.concatenate([lo, hi])[:n]

def _uniform(shape: tuple[int, ...], dt: DType, device: str) -> np.ndarray:
  """Uniform floats in [0, 1) of dtype dt: random mantissa bits under the exponent of 1.0, minus 1 (exact)."""
  numel, size = prod(shape), dt.itemsize
  if dt in dtypes.fp8s: raise fp8_unsupported(dt)
  if numel == 0: return np.zeros(shape, np.float32)
  uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]
  words = _random_words(-(-numel * size // 4), device).view(uint)[:numel]
  nmant = dtypes.finfo(dt)[1]
  if dt is dtypes.bfloat16: return ((words >> uint(9)) | uint(0x3F80)).astype(np.uint32).__lshift__(16).view(np.float32).reshape(shape) - 1
  one = np.array(1, dt.np).view(uint)
  return (((words >> uint(8 * size - nmant)) | one).view(dt.np) - 1).reshape(shape)

def _random_shape(shape) -> tuple[int, ...]:
  shape = _check_shape(_shape_arg(shape))
  if variables(shape): raise ValueError(f"random numbers need a fixed shape, got {shape}: draw the largest shape and shrink it")
  return shape


# ---------------------------------------------------------------- host data and constants, as UOps
def _owned_buffer(device: str, shape: tuple[int, ...], dtype: DType, data: np.ndarray | None = None, refill=None) -> UOp:
  """A new buffer of its own for a tensor (so it is written in place), as `shape`; `data` written into it now (write_host)."""
  buf = new_buffer(device, prod(shape), dtype)
  if data is not None: write_host(state.buffers[buf], data, refill)
  state.owned[buf] = None
  return buf.reshape(shape)

def _from_numpy(arr: np.ndarray, device: str) -> UOp:
  """Host data goes into a buffer on the PYTHON device; a lazy COPY moves it to `device` at realize."""
  arr = np.ascontiguousarray(arr).reshape(arr.shape)
  dtype = dtypes.from_np(arr.dtype)
  if arr.dtype != dtype.np: arr = arr.astype(dtype.np)
  view = _owned_buffer("PYTHON", arr.shape, dtype, arr)
  return view if Device.canonicalize(device) == "PYTHON" else UOp(Ops.COPY, dtype, (view, UOp(Ops.DEVICE, dtypes.void, (), device)))

def _const_buffer(u: UOp) -> UOp:
  shape = unwrap(u.shape)
  return _owned_buffer(u.device, shape, u.dtype, to_storage(np.full(prod(shape), u.base.arg), u.dtype))
def _const_uop(value, dtype: DType, device: str, shape: tuple[int, ...]) -> UOp:
  _check_int(value, dtype)
  c = UOp.const(dtype, value, (UOp(Ops.DEVICE, dtypes.void, (), device),))
  return c.reshape((1,) * len(shape)).expand(shape) if shape else c

# ---------------------------------------------------------------- constructors
def full(cls: type[Tensor], shape, fill_value, dtype=None, device=None, **kw) -> Tensor:
  shape = _check_shape(_shape_arg((shape,) if isinstance(shape, int) else shape))
  dt = to_dtype(dtype) if dtype is not None else dtypes.from_py(fill_value)
  return cls(cls._const_uop(fill_value, dt, Device.canonicalize(device), shape), **kw)
def zeros(cls: type[Tensor], *shape, dtype=None, device=None, **kw) -> Tensor: return cls.full(_shape_arg(shape), 0.0, dtype or dtypes.default_float, device, **kw)
def ones(cls: type[Tensor], *shape, dtype=None, device=None, **kw) -> Tensor: return cls.full(_shape_arg(shape), 1.0, dtype or dtypes.default_float, device, **kw)
def empty(cls: type[Tensor], *shape, dtype=None, device=None, **kw) -> Tensor:
  shape = _check_shape(_shape_arg(shape))
  return cls(_owned_buffer(Device.canonicalize(device), shape, to_dtype(dtype or dtypes.default_float)), **kw)
def from_blob(cls: type[Tensor], ptr: int, shape, dtype=None, device=None, **kw) -> Tensor:
  """A tensor over host memory at address ptr, neither owned nor copied (tinygrad 0.10's from_blob): each use reads the
  memory as it is then, and assign() writes into it. The memory must stay valid while the tensor lives."""
  dev, dt, shape = Device.canonicalize(device), to_dtype(dtype or dtypes.default_float), _check_shape(_shape_arg(shape))
  if not hasattr(Device[dev].allocator, "_as_buffer"): raise ValueError(f"from_blob needs a device whose memory is the host's (CPU, LLVM, PYTHON), not {dev}")
  if variables(shape): raise ValueError(f"from_blob needs a fixed shape, got {shape}")
  if type(ptr) is not int or ptr <= 0: raise ValueError(f"from_blob needs a memory address (a positive int, e.g. helpers.mv_address(mv)), got {ptr!r}")
  b = state.buffers[buf := new_buffer(dev, prod(shape), dt)] = ExternalBuffer(dev, prod(shape), dt)
  b._buf, b.allocator = np.ctypeslib.as_array((ctypes.c_uint8 * b.nbytes).from_address(ptr)), Device[dev].allocator
  state.owned[buf] = None
  return cls(buf.reshape(shape), **kw)
def full_like(self: Tensor, fill_value, dtype=None, device=None, **kw) -> Tensor:
  return type(self).full(self.shape, fill_value, dtype or self.dtype, device or self.device, **kw)
def zeros_like(self: Tensor, **kw) -> Tensor: return self.full_like(0, **kw)
def ones_like(self: Tensor, **kw) -> Tensor: return self.full_like(1, **kw)
def rand_like(self: Tensor, dtype=None, **kw) -> Tensor:
  if not dtypes.is_float(dt := to_dtype(dtype or self.dtype)): raise ValueError(f"rand only supports float dtypes, got {dt}")
  return type(self).rand(*self.shape, device=kw.pop("device", None) or self.device, dtype=dt, **kw)
def randn_like(self: Tensor, dtype=None, device=None, **kw) -> Tensor: return type(self).randn(*self.shape, device=device or self.device, dtype=dtype or self.dtype, **kw)
def empty_like(self: Tensor, dtype=None, device=None, **kw) -> Tensor: return type(self).empty(*self.shape, dtype=dtype or self.dtype, device=device or self.device, **kw)

def _host(cls: type[Tensor], make: Callable[[], np.ndarray], device=None, dtype=None, random: bool = False, **kw) -> Tensor:
  """A tensor whose data is made on the host now (random numbers, arange, eye), written into a buffer on its device.
  `random`: make() draws new numbers each call; a TinyJit replay calls it again instead of reusing the first draw."""
  shape = np.shape(arr := make())
  dt = to_dtype(dtype) if dtype is not None else dtypes.from_np(arr.dtype)
  def host() -> np.ndarray: return np.ascontiguousarray(to_storage(make(), dt)).reshape(shape)
  first = np.ascontiguousarray(to_storage(arr, dt)).reshape(shape)
  return cls(_owned_buffer(Device.canonicalize(device), shape, dt, first, host if random else None), **kw)
def _eager(cls: type[Tensor], arr: np.ndarray, device=None, dtype=None, **kw) -> Tensor: return cls._host(lambda: arr, device, dtype, **kw)
def manual_seed(seed: int = 0): _RNG.seed, _RNG.devices = int(seed), {}
def rand(cls: type[Tensor], *shape, device=None, dtype=None, **kw) -> Tensor:
  dt, shape = to_dtype(dtype or dtypes.default_float), _random_shape(shape)
  if not dtypes.is_float(dt): raise ValueError(f"rand only supports float dtypes, got {dt}")
  dev, _ = Device.canonicalize(device), kw.pop("contiguous", None)  # (tinygrad's contiguous=False: a host buffer is both)
  return cls._host(lambda: _uniform(shape, dt, dev), dev, dt, random=True, **kw)
def randn(cls: type[Tensor], *shape, device=None, dtype=None, **kw) -> Tensor:
  """Box-Muller on two float32 uniform draws, as tinygrad (the same draws after the same seed), computed on the host in
  float64 and rounded: tinygrad's own float32 kernels agree to an ulp. Host data, so every reader sees the same values."""
  shape, dev = _random_shape(shape), Device.canonicalize(device)
  def draw() -> np.ndarray:
    u = _uniform((2, *shape), dtypes.float32, dev).astype(np.float64)
    return (np.cos(u[0] * (2 * math.pi)) * np.sqrt(-2 * np.log1p(-u[1]))).astype(np.float32)
  return cls._host(draw, dev, to_dtype(dtype or dtypes.default_float), random=True, **kw)
def uniform(cls: type[Tensor], *shape, low=0.0, high=1.0, dtype=None, requires_grad=None, **kw) -> Tensor:
  return cls(((high - low) * cls.rand(*shape, **kw)).cast(to_dtype(dtype or dtypes.default_float)).add(low).uop, requires_grad=requires_grad)
def normal(cls: type[Tensor], *shape, mean=0.0, std=1.0, requires_grad=None, **kw) -> Tensor:
  return cls((cls.randn(*shape, **kw) * std + mean).uop, requires_grad=requires_grad)
def randint(cls: type[Tensor], *shape, low=0, high=10, dtype=dtypes.int32, **kw) -> Tensor:
  if not isinstance(low, int) or not isinstance(high, int): raise TypeError(f"randint's low={low!r} and high={high!r} must be ints")
  if not dtypes.is_int(dt := to_dtype(dtype)): raise TypeError(f"randint makes ints, got dtype={dt}")
  return cls.uniform(*shape, low=low, high=high, dtype=dt, **kw)
def randperm(cls: type[Tensor], n: int, *, device=None, dtype=dtypes.int32, **kw) -> Tensor:
  return cls.rand(n, device=device).sort()[1].cast(dtype).requires_grad_(kw.get("requires_grad"))
def arange(cls: type[Tensor], start, stop=None, step=1, device=None, dtype=None, **kw) -> Tensor:
  if stop is None: start, stop = 0, start
  if step == 0: raise ValueError("arange step must not be 0")
  if variables((start, stop, step)):  # a variable length: the number line of the largest length, shrunk to this one
    if variables(step) or step != 1: raise ValueError(f"arange with a variable start or stop needs step 1, got {step}")
    n = _check_shape((sym_canon(stop - start),))[0]
    if isinstance(n, int): return cls.arange(n, device=device, dtype=dtype, **kw) + start
    if not _ge(n, 0): raise ValueError(f"arange({start}, {stop}) can have a negative length for some value of its variables")
    return cls((cls.arange(n.vmax, device=device, dtype=dtype).shrink(((0, n),)) + start).cast(dtype or dtypes.default_int).uop, **kw)
  dt = to_dtype(dtype) if dtype is not None else (dtypes.default_float if any(isinstance(x, float) for x in (start, stop, step))
                                                   else max(dtypes.from_py(int(start)), dtypes.from_py(int(stop))))
  n = max(0, math.ceil((stop - start) / step))
  if dtypes.is_float(dt) and not all(float(x).is_integer() for x in (start, step)):  # start + i*step rounds: as numpy does it
    return cls._eager(np.arange(start, stop, step), device, dt, **kw)
  # no memory: the number line 0..n-1 (Ops.ARANGE), scaled and shifted; a kernel computes it from its loop index
  line = cls(UOp(Ops.ARANGE, dtypes.int64 if dtypes.is_int(dt) and dt.itemsize > 4 else dtypes.int32 if dtypes.is_int(dt) else dt,
                    (UOp(Ops.DEVICE, dtypes.void, (), Device.canonicalize(device)),), n))
  ret = line if (start, step) == (0, 1) else line * int(step) + int(start) if dtypes.is_int(dt) else line * float(step) + float(start)
  return cls(ret.cast(dt).uop, **kw)
def eye(cls: type[Tensor], n: int, m: int | None = None, device=None, dtype=None, **kw) -> Tensor:
  return cls._eager(np.eye(n, m), device, dtype or dtypes.default_float, **kw)


def _check_int(value, dtype: DType):
  if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and dtypes.is_int(dtype) and not int_fits(int(value), dtype):
    raise OverflowError(f"the Python int {value} does not fit in {dtype} (it would wrap around); cast the tensor to a wider dtype first")

def _np_cast(arr: np.ndarray, dt: DType) -> np.ndarray:
  """A host-side cast with the kernels' rule (renderer/prerender.py: x86's, what numpy gives there), on any machine."""
  if arr.dtype.kind != "f" or not dtypes.is_int(dt): return arr.astype(dt.np)
  if dt.itemsize < 4: return _np_cast(arr, dtypes.int32).astype(dt.np)  # through int32, wrapping
  if dt is dtypes.uint32 and arr.dtype == np.float16: return _np_cast(arr, dtypes.int64).astype(dt.np)
  a = arr.astype(np.float64)
  if dtypes.is_unsigned(dt):  # through the signed type of its width; from 2**(n-1) up, x - 2**(n-1) with the top bit set
    s = dtypes.int32 if dt.itemsize == 4 else dtypes.int64
    top = 2.0 ** (8 * dt.itemsize - 1)
    with np.errstate(invalid="ignore"): big = a >= top
    return np.where(big, _np_cast(a - top, s) ^ np.array(dtypes.min(s), s.np), _np_cast(a, s)).astype(dt.np)
  with np.errstate(invalid="ignore"): inside = (a < dtypes.max(dt) + 1.0) & (a > dtypes.min(dt) - 1.0)  # NaN fails both
  out = np.where(inside, a, 0.0).astype(dt.np)  # (truncates toward 0)
  out[~inside] = dtypes.min(dt)
  return out

def _wrap_ints(data, dt: DType) -> np.ndarray | None:
  """Python ints as dt, wrapping around where they do not fit (as tinygrad 0.10 and a C cast do); None if not all ints."""
  o = np.array(data, dtype=object)
  if not all(isinstance(v, (int, np.integer)) for v in o.flat): return None
  return np.array([wrap_int(int(v), dt) for v in o.flat], dtype=dt.np).reshape(o.shape)

def _list_to_numpy(data, dt: DType | None) -> np.ndarray:
  try:
    if dt is not None and dtypes.is_int(dt) and (f := np.array(data)).dtype.kind in "fO":  # floats, or ints beyond 64 bits
      return w if (w := _wrap_ints(data, dt)) is not None else _np_cast(f.astype(np.float64), dt)
    arr = np.array(data, dtype=dt.np if dt is not None else None)
  except OverflowError:
    if dt is None or (w := _wrap_ints(data, dt)) is None: raise
    arr = w
  except ValueError as e: raise ValueError(f"cannot make a Tensor from a ragged or mixed list: {e}") from None
  if dt is None:
    if arr.dtype == object: raise TypeError("cannot make a Tensor from a list of non-numbers")
    inferred = dtypes.from_py(data) if arr.size else dtypes.default_float
    arr = arr.astype(inferred.np)
  return arr
