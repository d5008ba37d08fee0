def sum_of_squares(tensors):
  total = tensors[0] * tensors[0]
  for t in tensors[1:]: total = total + t * t
  return total
