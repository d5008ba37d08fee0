"""Small shared utilities: environment flags, Context, counters and colours.

Every knob a learner can turn (DEBUG, NOOPT, BEAM, ...) is a `ContextVar`: it starts from the
environment variable of the same name and can be changed for a block with `Context(DEBUG=2)`."""
from __future__ import annotations
import contextlib, ctypes, dataclasses, functools, os, pathlib, re, sys, threading, time, warnings
from typing import Any, Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")

def plural(n, word: str, many: str | None = None) -> str:
  """"1 kernel", "3 kernels": the count and the word, in its plural unless the count is one. `many` is the plural of an
  irregular word ("copy", "copies"). Every count the notebook layer and the DEBUG printer write goes through here."""
  return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"

def getenv(key: str, default: Any = 0) -> Any:
  """Read an environment variable, converted to the type of `default`."""
  val = os.environ.get(key)
  if val is None: return default
  try: return type(default)(val)
  except ValueError: raise ValueError(f"environment variable {key}={val!r} is not a valid {type(default).__name__}") from None

def prod(xs: Iterable[Any], start: Any = 1) -> Any: return functools.reduce(lambda a, b: a * b, xs, start)

def all_same(xs: list) -> bool: return all(x == xs[0] for x in xs)
def dedup(xs: Iterable[T]) -> list[T]: return list(dict.fromkeys(xs))
def flatten(xss: Iterable[Iterable[T]]) -> list[T]: return [x for xs in xss for x in xs]
def ceildiv(a: int, b: int) -> int: return -(-a // b)
def mv_address(mv: memoryview) -> int: return ctypes.addressof(ctypes.c_char.from_buffer(mv))  # writable memory's address (Tensor.from_blob)
def postorder(roots: Iterable[T], children: Callable[[T], Sequence[T]]) -> list[T]:
  """Every node reachable from `roots`, each after its children (`children(n)`, called once per node, walked in order):
  an iterative depth-first walk, so a deep graph does not reach Python's recursion limit."""
  seen: set[T] = set()
  out: list[T] = []
  stack: list[tuple[T, bool]] = [(r, False) for r in reversed(list(roots))]
  while stack:
    n, done = stack.pop()
    if done: out.append(n); continue  # noqa: E702
    if n in seen: continue
    seen.add(n)
    stack.append((n, True))
    stack.extend((c, False) for c in reversed(children(n)) if c not in seen)
  return out
def unwrap(x: T | None) -> T:
  """x, where the caller knows it is not None (a UOp's shape, at the tensor level): a type checker takes that on trust."""
  assert x is not None, "unwrap: got None"
  return x

class ContextVar:
  """A named setting read from the environment and overridable with `Context`."""
  registry: dict[str, ContextVar] = {}
  def __init__(self, key: str, default: int):
    self.key, self.value = key, getenv(key, default)
    ContextVar.registry[key] = self
  def __bool__(self): return bool(self.value)
  def __int__(self): return int(self.value)
  def __ge__(self, x): return self.value >= x
  def __gt__(self, x): return self.value > x
  def __le__(self, x): return self.value <= x
  def __lt__(self, x): return self.value < x
  def __eq__(self, x): return self.value == x
  __hash__ = object.__hash__
  def __repr__(self): return f"{self.key}={self.value}"

DEBUG, NOOPT, BEAM = ContextVar("DEBUG", 0), ContextVar("NOOPT", 0), ContextVar("BEAM", 0)
CACHELEVEL = ContextVar("CACHELEVEL", 2)
MATMUL_PACK = ContextVar("MATMUL_PACK", 1)  # 0: never copy a big matmul's right operand into column panels (renderer/layout.py)
CONV_ROWS = ContextVar("CONV_ROWS", 1)      # 0: never lay a conv or its weight gradient along rows (renderer/layout.py)
# 1: the teaching path only (docs/architecture.md): no speed work of the CPU device's own -- no packed matmul, no conv row
# windows, no lane vectors, kernels loaded with dlopen from a compiler started per kernel. Values stay the same (tested)
PLAIN = ContextVar("LAZYNB_PLAIN", 0)
# 1: every kernel checks each load and store index against its buffer's size and raises OutOfBoundsError (device.py)
CHECK = ContextVar("LAZYNB_CHECK", 0)
# 1: new device memory is filled with 0xff bytes (NaN floats, -1 ints) instead of whatever it held: a kernel that reads
# memory nothing wrote shows it (pipeline.check grades a replaced stage this way)
POISON = ContextVar("LAZYNB_POISON", 0)
# 0: TinyJit calls its function plainly every time (nothing captured, jit_cache empty), as tinygrad's JIT=0
JIT = ContextVar("JIT", 1)
# 0: what runs in the block is not recorded by a capturing TinyJit (its replays skip it; a value it wrote stays as it is)
CAPTURING = ContextVar("CAPTURING", 1)
# tinygrad 0.10's scheduler switches, accepted so its code and tests that set them run (docs/compat.md). DONT_GROUP_REDUCES=1
# stores a reduce that needs its own kernel, not the elementwise ops above it (Scheduler.chase_reduces), and lets reduces
# over the same loops share a kernel (Scheduler.find_reduce); DONT_REALIZE_EXPAND=1 computes a reduce read through an
# expand again in its reader's kernel (engine/schedule.py, _expanded_reduce). For the others lazynb's schedule is the same
# for every value: it always computes an arange inside the kernel that reads it (FUSE_ARANGE=1's effect, so that is the
# value it reports); it has no conv-backward switch (FUSE_CONV_BW); it keeps no rewrite-match statistics (TRACK_MATCH_STATS)
FUSE_ARANGE, FUSE_CONV_BW = ContextVar("FUSE_ARANGE", 1), ContextVar("FUSE_CONV_BW", 0)
SPLIT_REDUCEOP = ContextVar("SPLIT_REDUCEOP", 1)  # 0: a long float sum is one running sum (engine/schedule.py, split_sums)
DONT_GROUP_REDUCES, DONT_REALIZE_EXPAND, TRACK_MATCH_STATS = ContextVar("DONT_GROUP_REDUCES", 0), ContextVar("DONT_REALIZE_EXPAND", 0), \
  ContextVar("TRACK_MATCH_STATS", 0)

class Nesting:
  """A block that can nest: `with n:` ... inside any of them `bool(n)` is True (trace.muted, BEAM's quiet compiler)."""
  def __init__(self): self.depth = 0
  def __enter__(self): self.depth += 1
  def __exit__(self, *exc): self.depth -= 1
  def __bool__(self) -> bool: return self.depth > 0

class Context(contextlib.ContextDecorator):
  """`with Context(DEBUG=2, NOOPT=1): ...` sets flags for a block and restores them after."""
  def __init__(self, **kwargs: int):
    for k in kwargs:
      if k not in ContextVar.registry: raise KeyError(f"unknown setting {k!r}; known settings: {sorted(ContextVar.registry)}")
      if not isinstance(kwargs[k], int): raise TypeError(f"{k} must be an int, got {kwargs[k]!r}")
    self.kwargs = kwargs
  def __enter__(self):
    self.old = {k: ContextVar.registry[k].value for k in self.kwargs}
    for k, v in self.kwargs.items(): ContextVar.registry[k].value = int(v)
    return self
  def __exit__(self, *exc):
    for k, v in self.old.items(): ContextVar.registry[k].value = v

@dataclasses.dataclass(frozen=True)
class Metadata:
  """Which Tensor method made a graph node (tinygrad 0.10): `name`, and `backward` for a node its gradient rule made."""
  name: str
  caller: str = ""
  backward: bool = False
  def __repr__(self): return self.name + (" bw" if self.backward else "")

class GlobalCounters:
  """Running totals since the last `reset()`: kernels run, FLOPs, bytes moved, time spent."""
  global_ops: int = 0
  global_mem: int = 0
  time_sum_s: float = 0.0
  kernel_count: int = 0
  mem_used: int = 0  # bytes currently allocated on devices
  @staticmethod
  def reset(): GlobalCounters.global_ops, GlobalCounters.global_mem, GlobalCounters.time_sum_s, GlobalCounters.kernel_count = 0, 0, 0.0, 0

# ANSI colours, used by the DEBUG printer and kernel names
_COLORS = {"black": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36, "white": 37}
def colored(s: str, color: str | None, background=False) -> str:
  if color is None: return s
  bright = color.startswith("BRIGHT_")
  code = _COLORS[color.lower().removeprefix("bright_")] + (60 if bright else 0) + (10 if background else 0)
  return f"\u001b[{code}m{s}\u001b[0m"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
def strip_ansi(s: str) -> str: return _ANSI.sub("", s)
def ansilen(s: str) -> int: return len(strip_ansi(s))
def ansistrip_pad(s: str, n: int) -> str: return s + " " * max(0, n - ansilen(s))

def to_function_name(s: str) -> str:
  """Kernel names may carry colour codes; C identifiers may not."""
  return "".join(c if c.isalnum() or c == "_" else f"{ord(c):02X}" for c in strip_ansi(s))

def cache_dir() -> pathlib.Path:
  """$LAZYNB_CACHE, else ~/.cache/lazynb (created). Raises OSError when it cannot be created (see `no_disk_cache`)."""
  base = os.environ.get("LAZYNB_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lazynb")
  p = pathlib.Path(base)
  p.mkdir(parents=True, exist_ok=True)
  return p

class DiskCacheWarning(UserWarning):
  """The cache directory or its database cannot be written: this process runs without a disk cache."""
_no_cache_lock = threading.Lock()
_no_cache_why: str | None = None
def no_disk_cache(why: str | None = None) -> str | None:
  """Without `why`: the reason the disk cache is off in this process, or None. With it: turn the cache off (the first
  reason wins) and warn, once per process. Caches are an optimization: failing to use one must never stop a kernel."""
  global _no_cache_why
  if why is None: return _no_cache_why
  with _no_cache_lock:
    if _no_cache_why is not None: return _no_cache_why
    _no_cache_why = why
  warnings.warn(f"lazynb runs without its disk cache: {why} (set LAZYNB_CACHE to a writable directory to cache compiled kernels)",
                DiskCacheWarning, stacklevel=3)
  return why

def fmt_time(s: float) -> str:
  if s < 1e-3: return f"{s*1e6:7.2f}us"
  return f"{s*1e3:7.2f}ms" if s < 1 else f"{s:7.2f}s "

class Timing(contextlib.ContextDecorator):
  """`with Timing("step "):` prints how long the block took in ms (tinygrad's helper); `on_exit(ns)` adds to the line."""
  def __init__(self, prefix: str = "", on_exit: Callable[[int], str] | None = None, enabled: bool = True):
    self.prefix, self.on_exit, self.enabled = prefix, on_exit, enabled
  def __enter__(self):
    self.st = time.perf_counter_ns()
    return self
  def __exit__(self, *exc):
    self.et = time.perf_counter_ns() - self.st
    if self.enabled: print(f"{self.prefix}{self.et * 1e-6:6.2f} ms" + (self.on_exit(self.et) if self.on_exit else ""))


class tqdm:
  """A small progress bar on stderr (tinygrad 0.10's helpers.tqdm, used by its tutorials): wrap an iterable, or call
  update(n) by hand; `disable` turns the printing off. It redraws at most every 0.1 s and once at the end."""
  def __init__(self, iterable=None, desc: str = "", disable: bool = False, unit: str = "it", unit_scale=False, total: int | None = None, rate: int = 100):
    self.iterable, self.desc, self.disable, self.unit = iterable, desc, disable, unit
    self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
    self.n, self.st, self._drawn = 0, time.perf_counter(), 0.0
  def __iter__(self):
    for x in self.iterable if self.iterable is not None else ():
      yield x
      self.update(1)
    self.close()
  def __enter__(self): return self
  def __exit__(self, *exc): self.close()
  def set_description(self, desc: str): self.desc = desc
  def update(self, n: int = 1, close: bool = False):
    self.n += n
    if close or time.perf_counter() - self._drawn >= 0.1: self._draw()
  def close(self):
    if not self.disable and self.n: self._draw(end="\n")
    self.disable = True
  def _draw(self, end: str = ""):
    if self.disable: return
    self._drawn = now = time.perf_counter()
    rate = self.n / max(now - self.st, 1e-9)
    done = f"{self.n}/{self.total}" if self.total else f"{self.n}"
    pct = f"{100 * self.n / self.total:3.0f}% " if self.total else ""
    sys.stderr.write(f"\r{self.desc + ': ' if self.desc else ''}{pct}{done} [{now - self.st:.2f}s, {rate:.2f} {self.unit}/s]{end}")
    sys.stderr.flush()
