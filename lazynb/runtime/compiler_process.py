"""One C compiler run: source on stdin, the binary's bytes back, the next process started ahead of time (why, its costs,
how one is let go, LAZYNB_CC_PRESTART=0): docs/internals.md, "The compiler process started ahead"."""
from __future__ import annotations
import atexit, contextlib, os, signal, subprocess, tempfile, threading
from lazynb.helpers import Nesting, unwrap, PLAIN

SPARES = 2  # commands with a process waiting (a CPU device uses two: float kernels, and float16 ones without contraction)
PRESTART = ("0", "1")
_REMOVE_FAILED = "unable to remove file"  # clang's words when, after an error, it cannot delete /dev/fd/N (harmless)

def prestart_knob() -> bool:
  """Start the next compiler ahead of time? LAZYNB_CC_PRESTART (1, the default, or 0)."""
  v = os.environ.get("LAZYNB_CC_PRESTART", "") or ("0" if PLAIN else "1")
  if v not in PRESTART: raise ValueError(f"LAZYNB_CC_PRESTART={v!r}: use 1 (start the next compiler ahead) or 0")
  return v == "1" and hasattr(os, "memfd_create")

class _Waiting:
  """A compiler process started with `cmd` plus "-o /dev/fd/N", blocked reading its source from stdin."""
  def __init__(self, cmd: tuple[str, ...]):
    self.fd = os.memfd_create("lazynb-kernel")
    try: self.proc = subprocess.Popen([*cmd, "-o", f"/dev/fd/{self.fd}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, pass_fds=(self.fd,), start_new_session=True)
    except BaseException:
      os.close(self.fd)
      raise
    self.owner = os.getpid()
  def feed(self, src: bytes) -> tuple[int, str, bytes]:
    try:
      _, err = self.proc.communicate(src)
      os.lseek(self.fd, 0, os.SEEK_SET)
      with os.fdopen(os.dup(self.fd), "rb") as f: out = f.read()
    finally: os.close(self.fd)
    msg = "\n".join(ln for ln in err.decode(errors="replace").splitlines() if _REMOVE_FAILED not in ln)
    return self.proc.returncode, msg, out
  def let_go(self) -> subprocess.Popen:
    """Close its stdin: it compiles an empty source and exits as after any compile, cleaning up (killed, gcc -shared
    would leave its temporary object in TMPDIR). The caller reaps it (finish)."""
    os.close(self.fd)
    with contextlib.suppress(OSError): unwrap(self.proc.stdin).close()  # (started with stdin=PIPE)
    self.proc.stdin = None  # (so communicate leaves it alone)
    return self.proc

def finish(p: subprocess.Popen):
  try: p.communicate(timeout=30)
  except subprocess.TimeoutExpired:
    with contextlib.suppress(OSError): os.killpg(p.pid, signal.SIGKILL)
    p.communicate()

_waiting: dict[tuple[str, ...], _Waiting] = {}  # command -> its process, least recently used first
_lock = threading.Lock()
_paused = Nesting()  # true inside paused()
_leaving: list[tuple[int, subprocess.Popen]] = []  # (owner pid, process) let go, not reaped yet

def _take(cmd: tuple[str, ...]) -> _Waiting | None:
  with _lock: w = _waiting.pop(cmd, None)
  if w is None: return None
  if w.owner != os.getpid():  # a forked child: its parent feeds that process, not us
    os.close(w.fd)
    return None
  if w.proc.poll() is not None:  # it died while waiting (killed from outside): start another
    finish(w.let_go())
    return None
  return w

def _start_next(cmd: tuple[str, ...]):
  if _paused: return
  with _lock:
    if cmd in _waiting and _waiting[cmd].owner == os.getpid(): return
    try: new = _Waiting(cmd)
    except OSError: return  # the compiler is gone: the next compile says so itself
    old = [_waiting.pop(cmd)] if cmd in _waiting else []
    _waiting[cmd] = new
    old += [_waiting.pop(k) for k in list(_waiting)[:-SPARES]]
    for w in old:
      if w.owner == os.getpid(): _leaving.append((w.owner, w.let_go()))
      else: os.close(w.fd)  # a forked child's copy of its parent's file
    _leaving[:] = [(o, p) for o, p in _leaving if o != os.getpid() or p.poll() is None]

def paused() -> Nesting:
  """No process started ahead inside this block (BEAM: one starting up would disturb the candidates' timing)."""
  return _paused

def run(cmd: list[str], src: bytes, out_name: str, prestart: bool) -> tuple[int, str, bytes]:
  """Compile `src` with `cmd` (the command without -o): (exit code, the compiler's messages, the output file's bytes).
  With `prestart`, a process started earlier with this command is used if there is one, and the next one is started."""
  if not prestart:
    with tempfile.TemporaryDirectory() as d:
      out = os.path.join(d, out_name)
      p = subprocess.run([*cmd, "-o", out], input=src, capture_output=True)
      if p.returncode != 0: return p.returncode, p.stderr.decode(errors="replace"), b""
      with open(out, "rb") as f: return 0, p.stderr.decode(errors="replace"), f.read()
  key = tuple(cmd)
  w = _take(key) or _Waiting(key)
  _start_next(key)  # now, not after: it loads on the other core while this one compiles (kernels back to back)
  return w.feed(src)

def stop_all():
  """Stop this process's waiting compilers (at exit; tests)."""
  with _lock:
    mine = [w.let_go() for w in _waiting.values() if w.owner == os.getpid()] + [p for o, p in _leaving if o == os.getpid()]
    _waiting.clear()
    _leaving.clear()
  for p in mine: finish(p)

def waiting_pids() -> list[int]:
  """The process ids of the compilers waiting for this process (their drivers)."""
  with _lock: return [w.proc.pid for w in _waiting.values() if w.owner == os.getpid()]

atexit.register(stop_all)
