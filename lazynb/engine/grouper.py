"""tinygrad 0.10's module name for grouping a graph into kernels (docs/abstractions2.py imports get_becomes_map from here);
lazynb does it in engine/kernelize.py."""
from lazynb.engine.kernelize import get_becomes_map, KernelArg  # noqa: F401
