"""The CL device takes the first OpenCL device that builds a kernel: an installed PoCL whose LLVM does not know the CPU
(pip's PoCL 3.0 on an AMD Zen 5 says "unknown target CPU 'generic'" for every kernel) is passed over, and when no device
builds one the CL device is unavailable with the compiler's words and what to install, not a CompileError per kernel."""
import types
import pytest
from lazynb.device import DeviceUnavailable
from lazynb.runtime import ops_cl

class FakeCL:
  """The few pyopencl names CLDevice's choice uses: platforms whose devices build kernels or refuse to."""
  class RuntimeError(Exception): pass
  device_type = types.SimpleNamespace(GPU=4, CPU=2)
  def __init__(self, devices):  # [(name, type, builds?)]
    self.devices, self.built = [types.SimpleNamespace(name=n, type=t, builds=b, extensions="", platform=types.SimpleNamespace(version=f"PoCL {n}"))
                                for n, t, b in devices], []
    cl = self
    class Context:
      def __init__(self, devs): self.dev = devs[0]
    class Program:
      def __init__(self, ctx, src): self.ctx = ctx
      def build(self):
        cl.built.append(self.ctx.dev.name)
        if not self.ctx.dev.builds: raise cl.RuntimeError("clBuildProgram failed\n\nerror: unknown target CPU 'generic'\nDevice failed")
        return self
    self.Context, self.Program = Context, Program
    self.CommandQueue = lambda ctx: None
  def get_platforms(self): return [types.SimpleNamespace(get_devices=lambda d=d: [d]) for d in self.devices]

def make(monkeypatch, devices):
  cl = FakeCL(devices)
  monkeypatch.setattr(ops_cl, "_cl", lambda: cl)
  return cl

def test_a_device_that_builds_no_kernel_is_passed_over(monkeypatch):
  cl = make(monkeypatch, [("old", 2, False), ("debian", 2, True)])
  assert ops_cl.CLDevice().cl_device.name == "debian" and cl.built == ["old", "debian"]

def test_a_gpu_is_tried_first(monkeypatch):
  cl = make(monkeypatch, [("cpu", 2, True), ("gpu", 4, True)])
  assert ops_cl.CLDevice().cl_device.name == "gpu" and cl.built == ["gpu"]

def test_no_device_builds_a_kernel_says_why_and_what_to_install(monkeypatch):
  make(monkeypatch, [("old", 2, False)])
  with pytest.raises(DeviceUnavailable, match=r"PoCL old: error: unknown target CPU 'generic'.*apt-get install pocl-opencl-icd"):
    ops_cl.CLDevice()
