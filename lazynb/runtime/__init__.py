"""Device runtimes: where compiled kernels run."""
