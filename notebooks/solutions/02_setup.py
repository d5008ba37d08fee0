from lazynb import GlobalCounters

def count_kernels(fn) -> int:
  kernels_before_the_call = GlobalCounters.kernel_count
  fn()
  return GlobalCounters.kernel_count - kernels_before_the_call
