"""Short texts for labels and status lines: a hint cut to fit keeps whole words and says it was cut."""
from __future__ import annotations

def clip_words(text: str, limit: int) -> str:
  """`text` whole if it fits in `limit` characters, else cut at the last space that leaves room for an ellipsis (mid-word
  only when its first word alone is too long), with the ellipsis."""
  if len(text) <= limit: return text
  head = text[:limit - 1]
  if text[limit - 1] != " " and " " in head: head = head[:head.rfind(" ")]
  return head.rstrip(" ,;:([") + "\u2026"
