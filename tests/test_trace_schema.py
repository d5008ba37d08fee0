"""The trace document's schema (lazynb/trace.schema.json), written once: real traces validate against it, a document that
drifts from it fails, and the TypeScript side (labextension/src/types.ts) reads exactly the fields the schema has, into
interfaces whose field names and types agree with it. Also the 2 MB bound of lazynb.notebook.tracedoc.bounded on a many-kernel trace."""
from __future__ import annotations
import copy, json, re
from pathlib import Path
import jsonschema
import pytest
from lazynb import Tensor, nn, Variable
from lazynb.trace import capture
from lazynb.notebook.tracedoc import bounded, MAX_DOC_BYTES

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "lazynb" / "trace.schema.json").read_text())
TYPES = (ROOT / "labextension" / "src" / "types.ts").read_text()
validator = jsonschema.Draft202012Validator(SCHEMA)

def errors(doc) -> list[str]: return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]

def _trace(fn) -> dict:
  try:
    with capture() as tr: fn()
  except ZeroDivisionError: pass  # the trace keeps the error
  return tr.to_json()

def _matmul(): (Tensor.rand(4, 4) @ Tensor.rand(4, 4)).relu().sum(axis=0).realize()
def _symbolic():
  (Tensor.ones(10, 4).contiguous().shrink(((0, Variable("i", 1, 10).bind(3)), (0, 4))) * 2).realize()
def _raises():
  (Tensor.rand(3) + 1).realize()
  raise ZeroDivisionError("boom <b>")
def _training():
  l1, l2 = nn.Linear(16, 32), nn.Linear(32, 4)
  opt = nn.optim.Adam([l1.weight, l1.bias, l2.weight, l2.bias])
  x, y = Tensor.rand(8, 16), Tensor([0, 1, 2, 3, 0, 1, 2, 3])
  with Tensor.train():
    for _ in range(2):
      opt.zero_grad()
      l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
      opt.step()

@pytest.fixture(scope="module")
def docs() -> dict[str, dict]: return {f.__name__: _trace(f) for f in (_matmul, _symbolic, _raises)}

@pytest.fixture(scope="module")
def big() -> dict: return _trace(_training)

def test_real_traces_validate(docs):
  for name, doc in docs.items():
    assert errors(doc) == [], name
  assert docs["_raises"]["error"]["type"] == "ZeroDivisionError"
  assert any(isinstance(x, str) for k in docs["_symbolic"]["kernels"] for x in k["global_size"] + k["full_shape"]), "a symbolic size"
  assert docs["_matmul"]["rewrites"] and docs["_matmul"]["kernels"][0]["uops"]

def test_output_stubs_validate_and_drift_fails(docs):
  """The stub an output's trace entry holds (lazynb.notebook.viz.stub: the document itself is in the text/html) is in the schema
  too ($defs/Stub): real ones validate, with and without an error and a `show`; an extra or a missing field fails."""
  from lazynb.notebook.viz import stub
  stubs = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/Stub"})
  def errs(d) -> list[str]: return [e.message for e in stubs.iter_errors(d)]
  for name, doc in docs.items():
    for d in (doc, dict(doc, show=["kernels"])): assert errs(stub(d)) == [], name
  for change in (lambda d: d.update(extra=1), lambda d: d["kernels"][0].update(source="..."), lambda d: d["kernels"][0].pop("time_s"),
                 lambda d: d.update(payload="application/json"), lambda d: d.pop("timing")):
    d = stub(docs["_matmul"])
    change(d)
    assert errs(d), change

def test_schema_rejects_drift(docs):
  """A field the schema does not know, a wrong type or a missing field fails: the schema is the one description."""
  for change in (lambda d: d["kernels"][0].update(new_field=1), lambda d: d["kernels"][0].update(source=3),
                 lambda d: d["schedule"][0].pop("reason"), lambda d: d.update(version=2), lambda d: d["graphs"].update(g999={"nodes": []})):
    d = copy.deepcopy(docs["_matmul"])
    change(d)
    assert errors(d), change

@pytest.mark.slow
def test_many_kernel_trace_is_bounded(big):
  full = len(json.dumps(big))
  assert len(big["kernels"]) >= 20 and full > MAX_DOC_BYTES, (len(big["kernels"]), full)  # the case the bound is for
  b = bounded(big)
  assert len(json.dumps(b)) <= MAX_DOC_BYTES
  assert errors(b) == []
  # the kernel list, schedule, timings and sources are whole; the first kernels keep their graphs and UOp tables
  assert [k["source"] for k in b["kernels"]] == [k["source"] for k in big["kernels"]]
  assert [(k["name"], k["runs"], k["time_s"]) for k in b["kernels"]] == [(k["name"], k["runs"], k["time_s"]) for k in big["kernels"]]
  assert len(b["schedule"]) == len(big["schedule"]) and b["timing"] == big["timing"]
  assert b["kernels"][0]["graph"] in b["graphs"] and b["kernels"][0]["uops"] == big["kernels"][0]["uops"]
  refs = [k["graph"] for k in b["kernels"]] + [r["before_graph"] for r in b["rewrites"]] + b["tensor_graphs"]
  assert all(g in b["graphs"] for g in refs if g is not None), "every graph still referenced is kept"
  note = b["truncated"]["note"]
  assert note.startswith("Trace truncated") and "kernel UOp tables" in note and b["truncated"]["full_bytes"] == full
  assert "truncated" not in big, "the recorded trace itself is not changed"
  small = bounded(big, 300_000)   # tighter: sources are cut last, and said so
  assert len(json.dumps(small)) <= 300_000 and "kernel sources cut" in small["truncated"]["note"]
  assert bounded(bounded(big)) is not None and bounded({"x": 1}) == {"x": 1}

# ---- types.ts against the schema

def camel(name: str) -> str: return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)

def interfaces() -> dict[str, dict[str, str]]:
  """interface name -> field -> TypeScript type (inline object types become `Interface.field` entries too)."""
  out: dict[str, dict[str, str]] = {}
  for name, body in re.findall(r"export interface (\w+) \{\n(.*?)\n\}", TYPES, re.S):
    fields = dict(re.findall(r"^  (\w+)\??: (.+?);$", body, re.M))
    out[name] = fields
    for f, t in fields.items():
      if (m := re.fullmatch(r"\{ (.*) \}( \| null)?", t)):
        out[f"{name}.{f}"] = dict(re.findall(r"(\w+): ([^;]+)", m.group(1)))
  return out

def reader_keys() -> dict[str, set[str]]:
  """reader path (readKernel, readKernel.uops, readTrace.timing ...) -> the payload keys it reads."""
  out: dict[str, set[str]] = {}
  for fn, body in re.findall(r"function (read\w+)\([^)]*\)[^{]*\{\n(.*?)\n\}\n", TYPES, re.S):
    bound = re.findall(r"(?:const )?(\w+) = (?:[^;\n]*?)obj\((\w+)(?:\.(\w+))?\)", body)
    outer = next((v for v, arg, key in bound if arg in ("x", "data") and not key), None)
    if outer is None: continue  # a helper such as readLineMap, not the reader of an object
    for var, arg, key in bound:
      if var == outer: path = fn
      elif key and arg == outer: path = f"{fn}.{key}"
      else:  # obj(u) inside arr(k.uops).map((u, j) => ...)
        m = re.search(rf"arr\({outer}\.(\w+)\)\.map\(\(?{arg}\b", body)
        assert m, (fn, var, arg)
        path = f"{fn}.{m.group(1)}"
      out[path] = set(re.findall(rf"\b{var}\.([a-z_]+)\b", body))
  return out

def _kind(s: dict) -> tuple[str, bool]:
  """(kind, nullable) of a schema property."""
  if "anyOf" in s:
    parts = [p for p in s["anyOf"] if p.get("type") != "null"]
    nullable = len(parts) < len(s["anyOf"])
    return (_kind(parts[0])[0] if len(parts) == 1 else "dim"), nullable
  if "$ref" in s:
    name = s["$ref"].rsplit("/", 1)[1]
    return ("dim" if name == "dim" else "ref:" + name), False
  if "const" in s: return ("number" if isinstance(s["const"], (int, float)) else "string"), False
  if s.get("type") == "array": return "array:" + _kind(s["items"])[0], False
  if s.get("type") == "object": return "map", False
  return {"integer": "number", "number": "number", "string": "string", "boolean": "boolean"}.get(s.get("type"), "any"), False

def compatible(kind: str, nullable: bool, ts: str) -> bool:
  ts_null = ts.endswith(" | null")
  t = ts.removesuffix(" | null")
  if nullable and not ts_null: return False
  if kind.startswith("array:"):
    inner = kind[6:]
    if t.startswith("[") and t.endswith("][]"): return inner.startswith("array:")  # tuples: pairs of strings, edges
    return t.endswith("[]") and compatible(inner, False, t[:-2])
  if kind.startswith("ref:") and "x-ts-as" in SCHEMA["$defs"][kind[4:]]: return SCHEMA["$defs"][kind[4:]]["x-ts-as"] in (ts, t)
  if kind.startswith("ref:"):
    target = SCHEMA["$defs"][kind[4:]].get("x-ts-interface", "")
    return t == target or t.startswith("{")
  if kind == "map": return t.startswith("Map<") or t.endswith("][]")  # an object read as a Map or as entries
  if kind == "dim": return t == "Dim"
  return kind == t

def _defs_with_readers():
  yield "TraceDoc", SCHEMA
  for name, d in SCHEMA["$defs"].items():
    if "x-ts-reader" in d: yield name, d

def test_typescript_reads_what_the_schema_defines():
  keys = reader_keys()
  for name, d in _defs_with_readers():
    want = set(d["properties"]) - set(d.get("x-ts-unread", []))
    got = keys.get(d["x-ts-reader"])
    assert got is not None, f"{name}: no reader {d['x-ts-reader']} in types.ts"
    assert got == want, (f"{name}: types.ts reads {sorted(got - want)} that the schema lacks, misses {sorted(want - got)} "
                         "(else list them in x-ts-unread)")
    assert set(d.get("x-ts-unread", [])) <= set(d["properties"]), name

def test_typescript_interfaces_match_the_schema():
  ifaces = interfaces()
  for name, d in _defs_with_readers():
    fields = ifaces.get(d["x-ts-interface"])
    assert fields is not None, f"{name}: no interface {d['x-ts-interface']} in types.ts"
    want = {camel(p): p for p in d["properties"] if p not in d.get("x-ts-unread", [])}
    assert set(fields) == set(want), f"{name}: interface fields {sorted(set(fields) ^ set(want))} differ from the schema's"
    known = d.get("x-ts-known-mismatch", {})
    for f, p in want.items():
      ok = compatible(*_kind(d["properties"][p]), fields[f])
      if p in known: assert not ok, f"{name}.{p} now agrees with the schema: take it out of x-ts-known-mismatch"
      else: assert ok, f"{name}.{p}: schema {_kind(d['properties'][p])} but types.ts has {fields[f]!r}"

def test_the_checks_can_fail(monkeypatch):
  """The types.ts parser sees a renamed field and an extra read."""
  global TYPES
  orig = TYPES
  try:
    TYPES = orig.replace("  displayName: string;", "  shownName: string;")
    with pytest.raises(AssertionError, match="interface fields"): test_typescript_interfaces_match_the_schema()
    TYPES = orig.replace("    source: str(k.source),", "    source: str(k.source ?? k.src),")
    with pytest.raises(AssertionError, match="reads \\['src'\\]"): test_typescript_reads_what_the_schema_defines()
    TYPES = orig.replace("  compileS: number | null;", "  compileS: number;")
    with pytest.raises(AssertionError, match="compile_s"): test_typescript_interfaces_match_the_schema()
  finally: TYPES = orig
