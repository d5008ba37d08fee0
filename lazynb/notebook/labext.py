"""What the JupyterLab extension's "tinygrad" panel reads from a kernel (lazynb/labextension, built from
labextension/ in the repo): the session defaults set with `%tinygrad`, and the devices.

The panel asks with a user expression, `__import__('lazynb.notebook.labext', fromlist=['state']).state()`; the
result displays as application/json (and its repr is the same JSON), so the front end never parses Python reprs.
"""
from __future__ import annotations
import json

class PanelState:
  def __init__(self, data: dict): self.data = data
  def _repr_json_(self): return self.data
  def __repr__(self): return json.dumps(self.data)

def state() -> PanelState:
  from lazynb.device import Device
  from lazynb.notebook import magic
  from lazynb.notebook.words import clip_words
  s = magic.SESSION
  devices = []
  for name in sorted(Device._devices):
    try: ok, why = Device.available(name)
    except Exception as e: ok, why = False, str(e)  # noqa: E701
    devices.append({"name": name, "ok": bool(ok), "why": clip_words(why.splitlines()[0], 300) if why else ""})
  return PanelState({"session": {"debug": s.debug or 0, "noopt": bool(s.noopt), "beam": s.beam or 0, "device": s.device},
                     "devices": devices, "default_device": Device.DEFAULT})
