"""The playground document's schema (lazynb/playground.schema.json), written once: real documents (NOOPT, the heuristic,
opts applied, a wrong result, after BEAM; a matmul, a reduce, an elementwise kernel) validate against it, a document
that drifts from it fails, and labextension/src/optview.ts's reader (readPlayground) reads no field the schema lacks."""
from __future__ import annotations
import copy, json, re
from pathlib import Path
import jsonschema
import numpy as np
import pytest
from lazynb import Tensor
from lazynb.codegen.kernel import Opt, OptOps
from lazynb.notebook.playground import Playground

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "lazynb" / "playground.schema.json").read_text())
OPTVIEW = (ROOT / "labextension" / "src" / "optview.ts").read_text()
validator = jsonschema.Draft202012Validator(SCHEMA)

def errors(doc) -> list[str]: return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
def _rand(*shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
def as_saved(doc: dict) -> dict: return json.loads(json.dumps(doc))  # what a notebook keeps

@pytest.fixture(scope="module")
def matmul() -> Playground:
  a, b = _rand(16, 16), _rand(16, 16, seed=1)
  return Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=1)

def test_schema_is_a_valid_schema(): jsonschema.Draft202012Validator.check_schema(SCHEMA)

def test_real_documents_validate(matmul):
  pg = matmul
  docs = {"heuristic": pg.doc(), "none": pg.reset("none").doc(), "upcast": pg.apply(Opt(OptOps.UPCAST, 1, 4)).doc()}
  r = _rand(8, 16, seed=2)
  docs["reduce"] = Playground(Tensor(r).sum(1), reference=r.sum(1), runs=1).doc()
  docs["elementwise"] = Playground(Tensor(r) * 2 + 1, runs=1).doc()   # compared with the NOOPT kernel
  docs["wrong"] = Playground(Tensor(r).sum(1), reference=r.sum(1) + 1, runs=1).doc()
  for name, d in docs.items(): assert errors(as_saved(d)) == [], name
  assert docs["none"]["previous"] is not None and docs["none"]["diff"] and docs["upcast"]["steps"]
  assert docs["wrong"]["state"]["correct"] is False and docs["wrong"]["notes"] and docs["elementwise"]["reference"].startswith("the unoptimized")

@pytest.mark.slow
def test_a_document_after_beam_validates():
  a, b = _rand(8, 8), _rand(8, 8, seed=3)
  d = as_saved(Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=1).beam(1).doc())
  assert d["beam"]["rounds_detail"] and d["beam"]["start"] is not None
  assert errors(d) == []

def test_schema_rejects_drift(matmul):
  """A field the schema does not know, a wrong type or a missing field fails: the schema is the one description."""
  base = as_saved(matmul.doc())
  for change in (lambda d: d.update(new_field=1), lambda d: d["state"].update(time_s="fast"), lambda d: d["state"].pop("correct"),
                 lambda d: d.update(version=2), lambda d: d["legal"][0].update(axis=-1), lambda d: d["state"]["axis_types"].append("SIDEWAYS"),
                 lambda d: d["peak"].pop("cpu"), lambda d: d.update(beam={"width": 1})):
    d = copy.deepcopy(base)
    change(d)
    assert errors(d), change

# ---- optview.ts's reader against the schema

def _props(s: dict) -> dict:
  """The properties of an object schema, through $ref and a nullable anyOf."""
  while True:
    if "$ref" in s: s = SCHEMA["$defs"][s["$ref"].rsplit("/", 1)[1]]
    elif "anyOf" in s: s = next(p for p in s["anyOf"] if p.get("type") != "null")
    else: return s.get("properties", {})

def _items(s: dict) -> dict:
  while "$ref" in s: s = SCHEMA["$defs"][s["$ref"].rsplit("/", 1)[1]]
  return s["items"]

def _body(signature: str, text: str) -> str:
  m = re.search(re.escape(signature) + r" \{\n(.*?)\n\}\n", text, re.S)
  assert m, f"optview.ts has no `{signature}`: update this test with the reader"
  return m.group(1)

def reads(text: str = OPTVIEW) -> list[tuple[str, str, dict]]:
  """(variable, field, the schema that variable holds) for every payload field readPlayground and candidate read."""
  body = _body("export function readPlayground(data: unknown): IPlaygroundDoc", text)
  bound: dict[str, dict] = {"d": SCHEMA}
  assert re.search(r"const d = obj\(data\);", body)
  out = []
  for m in re.finditer(r"\b(\w+)\.(\w+)\b|const (\w+) =[^;]*?obj\((\w+)\.(\w+)\)|arr\((\w+)\.(\w+)\)[\s.]*(?:map\(obj\)[\s.]*)?\w+\((\w+) =>", body):
    if m.group(3):  # const s = obj(d.state): s holds that field's object
      out.append((m.group(4), m.group(5), bound[m.group(4)]))
      bound[m.group(3)] = _props(bound[m.group(4)]).get(m.group(5), {})
    elif m.group(6):  # arr(s.views).map(obj).filter(v => ...): v holds one item
      out.append((m.group(6), m.group(7), bound[m.group(6)]))
      bound[m.group(8)] = _items(_props(bound[m.group(6)]).get(m.group(7), {"items": {}}))
    elif m.group(1) in bound: out.append((m.group(1), m.group(2), bound[m.group(1)]))
  for parent, field in re.findall(r"\bobj\((\w+)\.(\w+)\)\.[a-z_]+", body):  # obj(d.heuristic).opts
    sub = _props(bound[parent]).get(field, {})
    out += [(f"obj({parent}.{field})", f, sub) for f in re.findall(rf"\bobj\({parent}\.{field}\)\.([a-z_]+)", body)]
  # candidate(x) reads b.start and each of r.candidates
  assert "candidate(b.start)" in body and "arr(r.candidates).map(candidate)" in body
  cand = _body("function candidate(x: unknown): ICandidate", text)
  out += [("c", f, SCHEMA["$defs"]["Candidate"]) for f in re.findall(r"\bc\.(\w+)\b", cand)]
  return out

def test_the_reader_reads_only_fields_the_schema_has():
  got = reads()
  fields = {(v, f) for v, f, _ in got}
  # the reader was parsed: the fields every part of the view needs are among what it reads
  assert {("d", "state"), ("s", "axis_names"), ("s", "time_s"), ("v", "index"), ("b", "rounds_detail"), ("r", "best_s"), ("pk", "numpy_gflops"),
          ("obj(d.heuristic)", "time_s"), ("obj(pk.cpu)", "gflops"), ("c", "seconds")} <= fields, sorted(fields)
  unknown = sorted((v, f) for v, f, s in got if f not in _props(s))
  assert not unknown, f"optview.ts reads fields that lazynb/playground.schema.json does not have: {unknown}"

def test_the_check_catches_a_field_the_schema_lacks():
  """A misspelt field in the reader (the view would show 0 GFLOPS, silently) or one the document does not have."""
  for old, new, bad in (("gflops: num(s.gflops) ?? 0", "gflops: num(s.gflop) ?? 0", ("s", "gflop")),
                        ("bestS: num(r.best_s)", "bestS: num(r.bestS)", ("r", "bestS")),
                        ("seconds: num(c.seconds)", "seconds: num(c.secs)", ("c", "secs"))):
    assert old in OPTVIEW, old
    assert bad in {(v, f) for v, f, s in reads(OPTVIEW.replace(old, new)) if f not in _props(s)}, bad
