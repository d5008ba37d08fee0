"""Tensor is one class: the tensor_*.py files hold functions of a Tensor (`def sum(self: Tensor, ...)`, or
`def full(cls: type[Tensor], ...)` for a constructor), and tensor.py's class body names each one (`sum = tensor_reduce.sum`).
A name there is typed by hand, so these check the list against the files: every function is named, under its own name
(`max = tensor_reduce.sum` would be a silent wrong answer), and as the right kind (method, classmethod, staticmethod)."""
import inspect, types
import pytest
from lazynb import Tensor
from lazynb import tensor_create, tensor_movement, tensor_reduce, tensor_nn, tensor_loss, tensor_index, tensor_math, tensor_dtype

MODULES = [tensor_create, tensor_movement, tensor_reduce, tensor_nn, tensor_loss, tensor_index, tensor_math, tensor_dtype]

def own_functions(mod):
  return {n: f for n, f in vars(mod).items() if isinstance(f, types.FunctionType) and f.__module__ == mod.__name__}

def first_param(f): return next(iter(inspect.signature(f).parameters), None)

@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__.split(".")[-1])
def test_every_function_of_a_tensor_is_a_method_of_its_kind(mod):
  for name, f in own_functions(mod).items():
    first = first_param(f)
    if first not in ("self", "cls"): continue  # a helper of the file (`_use_rows`), or a staticmethod (checked below)
    assert name in vars(Tensor), f"{mod.__name__}.{name} takes a Tensor but tensor.py does not name it: add `{name} = {mod.__name__.split('.')[-1]}.{name}`"
    member = vars(Tensor)[name]  # (wrapped: the wrapper tags the nodes a method makes with its name, tensor.py's "Metadata")
    if first == "cls": assert isinstance(member, classmethod) and inspect.unwrap(member.__func__) is f, f"Tensor.{name} must be classmethod({mod.__name__}.{name})"
    else: assert inspect.unwrap(member) is f, f"Tensor.{name} is not {mod.__name__}.{name}"

def test_every_name_in_the_class_is_the_function_of_that_name():
  seen = 0
  for name, member in vars(Tensor).items():
    f = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
    if not isinstance(f, types.FunctionType) or f.__module__ not in {m.__name__ for m in MODULES}: continue
    seen += 1
    assert f.__name__ == name, f"Tensor.{name} is {f.__module__}.{f.__name__}"
    if isinstance(member, staticmethod): assert first_param(f) not in ("self", "cls"), f"Tensor.{name}: a staticmethod that takes {first_param(f)}"
    elif isinstance(member, classmethod): assert first_param(f) == "cls", f"Tensor.{name}: a classmethod whose first argument is not cls"
    else: assert first_param(f) == "self", f"Tensor.{name}: a method whose first argument is not self"
  assert seen >= 150, seen  # the files hold ~170 of Tensor's methods

def test_methods_from_the_files_behave_as_methods():
  t = Tensor([[1.0, 2.0], [3.0, 4.0]])
  assert inspect.unwrap(Tensor.sum) is tensor_reduce.sum and t.sum().item() == 10.0
  assert Tensor.full((2,), 3).tolist() == [3, 3] and Tensor.einsum("ij->ji", t).tolist() == [[1.0, 3.0], [2.0, 4.0]]
  assert t.T.tolist() == [[1.0, 3.0], [2.0, 4.0]] and t.int().dtype.name == "int" and t.max().item() == 4.0
  assert Tensor.sum.__doc__ == tensor_reduce.sum.__doc__ and inspect.signature(Tensor.full) == inspect.signature(tensor_create.full).replace(
    parameters=list(inspect.signature(tensor_create.full).parameters.values())[1:])
