def toposort(root):
  out, done = [], set()
  def visit(u):
    if u in done: return
    done.add(u)
    for s in u.src: visit(s)
    out.append(u)
  visit(root)
  return out
