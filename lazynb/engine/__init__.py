"""The engine: scheduling the lazy graph into kernels and running them."""
