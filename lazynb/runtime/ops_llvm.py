"""The LLVM device: kernels as LLVM IR, compiled inside the Python process by llvmlite to an object that
runtime/elfload.py places in memory (no compiler process). Use, needs, knobs: docs/internals.md, "The LLVM device"."""
from __future__ import annotations
import hashlib, threading
from lazynb.device import Compiler, Compiled, CompileError, DeviceUnavailable
from lazynb.dtype import dtypes
from lazynb.helpers import getenv
from lazynb.renderer.llvmir import LLVMRenderer
from lazynb.runtime import elfload
from lazynb.runtime.ops_cpu import CPUAllocator, CPUProgram, knobs, load_library, shape_cpu_renderer, simd_for

try:
  import llvmlite
  import llvmlite.binding as llvm
except ImportError: llvmlite = llvm = None

LOOP_VECTORIZE = bool(getenv("LAZYNB_LLVM_LOOPVEC", 0))
_lock = threading.Lock()  # LLVM's global context and our target machine are used by one thread at a time

class LLVMCompiler(Compiler):
  def __init__(self):
    if llvm is None: raise DeviceUnavailable("the LLVM device needs llvmlite: pip install llvmlite (or pip install 'lazynb[backends]')")
    if not hasattr(llvm, "create_pass_builder"):  # llvmlite before 0.45 has the legacy pass manager only
      raise DeviceUnavailable(f"the LLVM device needs llvmlite 0.45 or newer (this is {llvmlite.__version__}): pip install -U 'llvmlite>=0.45'")
    if not elfload.supported(): raise DeviceUnavailable("the LLVM device loads its objects with lazynb's loader, which runs on Linux x86-64 only; use the CPU device")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    march, _ = knobs()
    self.cpu = llvm.get_host_cpu_name() if march == "native" else march
    self.features = llvm.get_host_cpu_features().flatten() if march == "native" else ""
    target = llvm.Target.from_default_triple()
    self.tm = target.create_target_machine(cpu=self.cpu, features=self.features, opt=2, reloc="pic", codemodel="default")
    self.triple, self.layout = llvm.get_default_triple(), str(self.tm.target_data)
    feats = hashlib.sha256(self.features.encode()).hexdigest()[:12]
    super().__init__(f"compile_llvm_{'.'.join(map(str, llvm.llvm_version_info))}_{self.cpu}_{feats}")
  def has(self, feature: str) -> bool: return f"+{feature}" in self.features.split(",")
  def compile(self, src: str) -> bytes:
    """IR text -> optimized (LLVM's O2 pipeline) -> an x86-64 relocatable object, checked to load."""
    with _lock:
      try:
        mod = llvm.parse_assembly(src)
        mod.verify()
      except RuntimeError as e: raise CompileError(f"LLVM rejected the kernel's IR: {str(e).strip()}\n--- source ---\n{src}") from None
      mod.triple, mod.data_layout = self.triple, self.layout
      pto = llvm.create_pipeline_tuning_options(speed_level=2)
      # the kernels write their vector lanes out (UPCAST), which the SLP vectorizer packs; without the loop vectorizer
      # (which would mostly vectorize those loops again) a small kernel compiles in half the time (28 -> 15 ms here)
      pto.slp_vectorization, pto.loop_vectorization = True, LOOP_VECTORIZE
      pb = llvm.create_pass_builder(self.tm, pto)
      pb.getModulePassManager().run(mod, pb)
      obj = self.tm.emit_object(mod)
    try: load_library(obj)
    except elfload.ElfLoadError as e: raise CompileError(f"the LLVM device cannot load this kernel's object: {e}") from None
    return obj

class LLVMDevice(Compiled):
  def __init__(self, device: str = "LLVM"):
    compiler = LLVMCompiler()
    renderer = LLVMRenderer()
    shape_cpu_renderer(renderer, simd_for(compiler.has("avx512f"), compiler.has("avx")))
    renderer.prefer_width = 512 if compiler.has("avx512f") else 0
    # half <-> float: F16C instructions, else libgcc's __extendhfsf2 / __truncsfhf2 (gcc 12 and newer), found in the process
    self.half = compiler.has("f16c") or all(elfload.process_symbol(f) for f in ("__extendhfsf2", "__truncsfhf2"))
    super().__init__(device, CPUAllocator(), renderer, compiler, CPUProgram)
  def supports(self, dtype) -> bool: return dtype is not dtypes.float16 or self.half
