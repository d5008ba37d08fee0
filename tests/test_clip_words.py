"""Hints and labels cut to fit keep whole words and end with an ellipsis (issue 32.4: install hints were cut mid-word):
the helper, the sliders' device menu, the JupyterLab panel's device tooltips and the playground's opt menu."""
import re
import numpy as np
from lazynb import Tensor
from lazynb.device import Device
from lazynb.notebook.words import clip_words

HINT = ("the CUDA driver is not usable here (DynamicLibNotFoundError: libcuda.so.1 not found): install the NVIDIA driver "
        "and its CUDA toolkit, then restart the kernel")

def _cut_at_a_word(got: str, full: str, limit: int):
  assert len(got) <= limit and got.endswith("\u2026"), got
  kept = got[:-1]
  assert full.startswith(kept) and full[len(kept)] in " ,;:([", (kept, full[len(kept):len(kept) + 10])

def test_clip_words():
  assert clip_words("short enough", 12) == "short enough"
  assert clip_words("install clang", 10) == "install\u2026"
  assert clip_words("install clang now", 14) == "install clang\u2026"   # the space at the limit: the word before it is whole
  assert clip_words("abcdefghijkl", 5) == "abcd\u2026"                # one word longer than the limit: cut inside it
  for n in range(20, len(HINT)): _cut_at_a_word(clip_words(HINT, n), HINT, n)

def _unavailable(monkeypatch):
  real = Device.available
  monkeypatch.setattr(Device, "available", staticmethod(lambda name: (False, HINT + "\nsecond line") if name == "CUDA" else real(name)))

def test_device_menu_and_panel_hints_end_on_a_whole_word(monkeypatch):
  _unavailable(monkeypatch)
  from lazynb.notebook.widgets import device_options
  from lazynb.notebook.labext import state
  label = dict((n, lb) for lb, n in device_options())["CUDA"]
  m = re.fullmatch(r"CUDA \(unavailable: (.*)\)", label)
  assert m, label
  _cut_at_a_word(m.group(1), HINT, 60)
  why = next(d["why"] for d in state().data["devices"] if d["name"] == "CUDA")
  assert why == HINT   # the panel's tooltip has room for the whole first line

def test_playground_opt_menu_cuts_explanations_at_a_word():
  from lazynb.notebook.playground import Playground
  a, b = np.random.default_rng(0).standard_normal((2, 16, 16), dtype=np.float32)
  pg = Playground(Tensor(a) @ Tensor(b), reference=a @ b, runs=1)
  w = pg.widget()
  legal = pg.doc()["legal"]
  assert len(w.choice.options) == len(legal)
  cut = 0
  for (label, _), o in zip(w.choice.options, legal):
    text = o["explain"][len(o["opt"]) + 2:]
    shown = label.split("  \u2014 ", 1)[1]
    if shown != text:
      _cut_at_a_word(shown, text, 90)
      cut += 1
  assert cut  # some explanations are longer than the menu's 90 characters
