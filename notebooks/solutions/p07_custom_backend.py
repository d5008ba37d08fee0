import time
import itertools
from lazynb.device import Allocator, Compiler, CompileError, Runner

class BytesAllocator(Allocator):
  def _alloc(self, size, options=None): return bytearray(size)
  def copyin(self, dst, src: memoryview): dst[:len(src)] = src
  def copyout(self, dst: memoryview, src): dst[:] = src[:len(dst)]

class PyCompiler(Compiler):
  def compile(self, src: str) -> bytes:
    try: compile(src, "<kernel>", "exec")
    except SyntaxError as e: raise CompileError(f"{e}\n{src}") from e
    return src.encode()

class PyRunner(Runner):
  def __init__(self, name: str, lib: bytes):
    self.name = name
    ns: dict = {}
    exec(lib.decode(), ns)
    self.fxn = ns[name]
  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False):
    st = time.perf_counter()
    for g in itertools.product(*[range(n) for n in global_size]): self.fxn(*bufs, *g)
    return time.perf_counter() - st if wait else None
