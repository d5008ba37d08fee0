"""Loading a relocatable object (what `cc -c` writes) into this process without a linker: ELF64, x86-64, Linux. The
steps, the relocations handled and the errors (ElfLoadError, UndefinedSymbol): docs/internals.md, "The ELF loader"."""
from __future__ import annotations
import contextlib, ctypes, platform, struct, sys
from dataclasses import dataclass

class ElfLoadError(Exception):
  """The object uses something this loader does not handle (or is not an x86-64 ELF object at all)."""
class UndefinedSymbol(ElfLoadError):
  """The object calls or reads a symbol that neither it nor the process defines."""

def supported() -> bool:
  """Can this process load objects this way? Linux on x86-64 only (macOS writes Mach-O; aarch64 has other relocations)."""
  return sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")

# ---------------------------------------------------------------- constants from the ELF spec and the x86-64 psABI
ET_REL, EM_X86_64 = 1, 62
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 0, 1, 2, 3, 4, 8, 9
SHT_NOTE, SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY, SHT_GROUP = 7, 14, 15, 16, 17
SHT_X86_64_UNWIND = 0x70000001  # clang's .eh_frame
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_TLS = 0x1, 0x2, 0x4, 0x400
SHN_UNDEF, SHN_ABS, SHN_COMMON, SHN_LORESERVE = 0, 0xfff1, 0xfff2, 0xff00
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_SECTION, STT_TLS = 3, 6
R_NAMES = {0: "NONE", 1: "64", 2: "PC32", 4: "PLT32", 9: "GOTPCREL", 24: "PC64", 41: "GOTPCRELX", 42: "REX_GOTPCRELX"}  # the ones handled
R_64, R_PC32, R_PLT32, R_GOTPCREL, R_PC64, R_GOTPCRELX, R_REX_GOTPCRELX = 1, 2, 4, 9, 24, 41, 42
GOT_TYPES = (R_GOTPCREL, R_GOTPCRELX, R_REX_GOTPCRELX)
PAGE = 4096
JUMP_ENTRY = 16  # jmp *0(%rip) (6 bytes: ff 25 00000000), then the 8-byte target address, then 2 bytes of padding

@dataclass
class Section:
  index: int
  name: str
  type: int
  flags: int
  offset: int
  size: int
  align: int
  link: int
  info: int

@dataclass
class Symbol:
  name: str
  bind: int
  type: int
  shndx: int
  value: int
  size: int

def _align(n: int, a: int) -> int: return (n + a - 1) // a * a

def _cstr(table: bytes, off: int) -> str:
  end = table.find(b"\0", off)
  return table[off:end if end >= 0 else len(table)].decode(errors="replace")

def parse(obj: bytes) -> tuple[list[Section], list[Symbol]]:
  """The section headers and the symbol table of an x86-64 ELF64 relocatable object."""
  if len(obj) < 64 or obj[:4] != b"\x7fELF": raise ElfLoadError("not an ELF file")
  if obj[4] != 2 or obj[5] != 1: raise ElfLoadError("not a 64-bit little-endian ELF file")
  e_type, e_machine = struct.unpack_from("<HH", obj, 16)
  if e_type != ET_REL: raise ElfLoadError(f"ELF type {e_type}, not a relocatable object (ET_REL: made with cc -c)")
  if e_machine != EM_X86_64: raise ElfLoadError(f"ELF machine {e_machine}, not x86-64 ({EM_X86_64})")
  e_shoff, = struct.unpack_from("<Q", obj, 40)
  e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", obj, 58)
  if e_shentsize != 64 or e_shnum == 0 or e_shoff + 64 * e_shnum > len(obj):
    raise ElfLoadError(f"unexpected section header table ({e_shnum} entries of {e_shentsize} bytes at {e_shoff})")
  raw = [struct.unpack_from("<IIQQQQIIQQ", obj, e_shoff + 64 * i) for i in range(e_shnum)]
  shstr = raw[e_shstrndx]
  names = obj[shstr[4]:shstr[4] + shstr[5]]
  secs = [Section(i, _cstr(names, r[0]), r[1], r[2], r[4], r[5], max(r[8], 1), r[6], r[7]) for i, r in enumerate(raw)]
  for s in secs:
    if s.type != SHT_NOBITS and s.offset + s.size > len(obj): raise ElfLoadError(f"section {s.name} runs past the end of the file")
  symtabs = [s for s in secs if s.type == SHT_SYMTAB]
  if len(symtabs) != 1: raise ElfLoadError(f"{len(symtabs)} symbol tables (expected one)")
  st = symtabs[0]
  strtab = obj[secs[st.link].offset:secs[st.link].offset + secs[st.link].size]
  syms = [Symbol(_cstr(strtab, name), info >> 4, info & 0xf, shndx, value, size) for name, info, _, shndx, value, size in
          (struct.unpack_from("<IBBHQQ", obj, off) for off in range(st.offset, st.offset + st.size, 24))]
  return secs, syms

# ---------------------------------------------------------------- symbols of the process
_libs: list[ctypes.CDLL] | None = None
def process_symbol(name: str) -> int | None:
  """The address of `name` in this process (libc, libm, libgcc_s: where a linked library would find it), or None."""
  global _libs
  if _libs is None:
    libs = [ctypes.CDLL(None)]
    for soname in ("libm.so.6", "libgcc_s.so.1"):  # glibc's names (ctypes.util.find_library would start ldconfig)
      with contextlib.suppress(OSError): libs.append(ctypes.CDLL(soname))  # (musl: libm is in the C library)
    _libs = libs
  for lib in _libs:
    try: return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
    except AttributeError: continue
  return None

# ---------------------------------------------------------------- memory
_PROT_READ, _PROT_WRITE, _PROT_EXEC = 1, 2, 4
_MAP_PRIVATE, _MAP_ANONYMOUS = 0x02, 0x20
_libc = None
def _c():
  global _libc
  if _libc is None:
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    _libc.mprotect.restype, _libc.mprotect.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    _libc.munmap.restype, _libc.munmap.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
  return _libc

def _mmap(size: int) -> int:
  addr = _c().mmap(None, size, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS, -1, 0)
  if addr in (None, ctypes.c_void_p(-1).value): raise MemoryError(f"mmap of {size} bytes failed (errno {ctypes.get_errno()})")
  return addr

def _mprotect(addr: int, size: int, prot: int):
  if size and _c().mprotect(addr, size, prot) != 0: raise OSError(ctypes.get_errno(), f"mprotect({hex(addr)}, {size}) failed")

# ---------------------------------------------------------------- the loader
def _part(s: Section) -> str | None:
  """Which part of the image a section goes to (code, const, data), or None when it is not loaded."""
  if s.type in (SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_PREINIT_ARRAY):
    raise ElfLoadError(f"section {s.name}: constructors/destructors are not run by this loader")
  if s.type == SHT_GROUP: raise ElfLoadError(f"section {s.name}: section groups (COMDAT) are not handled")
  if s.type == SHT_REL: raise ElfLoadError(f"section {s.name}: REL relocations (without addends) are not used on x86-64")
  if not s.flags & SHF_ALLOC: return None
  if s.flags & SHF_TLS: raise ElfLoadError(f"section {s.name}: thread-local storage is not handled")
  if s.name == ".eh_frame" or s.type in (SHT_NOTE, SHT_X86_64_UNWIND): return None  # unwind tables, notes: not needed to run
  if s.type not in (SHT_PROGBITS, SHT_NOBITS): raise ElfLoadError(f"section {s.name}: type {hex(s.type)} is not handled")
  if s.flags & SHF_EXECINSTR: return "code"
  return "data" if s.flags & SHF_WRITE or s.type == SHT_NOBITS else "const"

class LoadedObject:
  """An object file placed in memory and relocated: `symbols` maps each global symbol it defines to its address."""
  def __init__(self, base: int, size: int, symbols: dict[str, int]): self.base, self.size, self.symbols = base, size, symbols
  def function(self, name: str):
    """A ctypes function for the global function `name` (returns nothing; arguments as given: c_void_p, c_int, ...)."""
    if name not in self.symbols: raise AttributeError(f"the object defines no global symbol {name!r}")
    return ctypes.CFUNCTYPE(None)(self.symbols[name])

def load_object(obj: bytes, lookup=process_symbol) -> LoadedObject:
  """Place the relocatable object `obj` in memory, relocate it, and return it. `lookup(name)` gives the address of a
  symbol the object does not define (default: the process's). Raises ElfLoadError for anything not handled."""
  secs, syms = parse(obj)
  parts = {s.index: p for s in secs if (p := _part(s)) is not None}
  relas = [s for s in secs if s.type == SHT_RELA and s.info in parts]
  for s in syms:
    if s.shndx == SHN_COMMON: raise ElfLoadError(f"symbol {s.name}: a common symbol (compile with -fno-common)")
    if s.type == STT_TLS: raise ElfLoadError(f"symbol {s.name}: thread-local storage is not handled")

  # every relocation, read once: (section it patches, offset, type, symbol index, addend)
  relocs = [(r.info, r_offset, r_info & 0xffffffff, r_info >> 32, r_addend) for r in relas for r_offset, r_info, r_addend in
            (struct.unpack_from("<QQq", obj, off) for off in range(r.offset, r.offset + r.size, 24))]
  if unknown := sorted({t for _, _, t, _, _ in relocs if t not in R_NAMES}):
    raise ElfLoadError(f"relocation types {unknown} are not handled (this loader knows R_X86_64_{', '.join(R_NAMES.values())})")
  for shndx, r_offset, rtype, _, _ in relocs:
    if r_offset + (8 if rtype in (R_64, R_PC64) else 4) > secs[shndx].size: raise ElfLoadError(f"a relocation at {r_offset} lies outside section {secs[shndx].name}")
  # outside functions called through the jump table; symbols reached through the GOT
  jumps = sorted({si for _, _, t, si, _ in relocs if t == R_PLT32 and syms[si].shndx == SHN_UNDEF})
  gots = sorted({si for _, _, t, si, _ in relocs if t in GOT_TYPES})

  # layout: offsets of every loaded section, part by part, each part starting on a page
  offsets: dict[int, int] = {}
  pos, bounds = 0, {}
  for part in ("code", "const", "data"):
    start = pos
    for sec in secs:
      if parts.get(sec.index) == part:
        pos = _align(pos, sec.align)
        offsets[sec.index], pos = pos, pos + sec.size
    if part == "code": jump_at, pos = _align(pos, JUMP_ENTRY), _align(pos, JUMP_ENTRY) + JUMP_ENTRY * len(jumps)
    if part == "const": got_at, pos = _align(pos, 8), _align(pos, 8) + 8 * len(gots)
    pos = _align(pos, PAGE)
    bounds[part] = (start, pos - start)
  if (big := max((s.align for s in secs if s.index in offsets), default=1)) > PAGE:
    raise ElfLoadError(f"a section asks for {big}-byte alignment (more than a page)")
  size = max(pos, PAGE)
  base = _mmap(size)
  try: symbols = _fill(obj, secs, syms, offsets, relocs, jumps, gots, jump_at, got_at, base, size, lookup)
  except BaseException:
    _c().munmap(base, size)
    raise
  _mprotect(base + bounds["code"][0], bounds["code"][1], _PROT_READ | _PROT_EXEC)
  _mprotect(base + bounds["const"][0], bounds["const"][1], _PROT_READ)
  return LoadedObject(base, size, symbols)

def _fill(obj: bytes, secs: list[Section], syms: list[Symbol], offsets: dict[int, int], relocs: list[tuple], jumps: list[int],
          gots: list[int], jump_at: int, got_at: int, base: int, size: int, lookup) -> dict[str, int]:
  """Copy the sections into the region at `base`, write the jump table and the GOT, apply the relocations; the
  addresses of the global symbols."""
  image = (ctypes.c_char * size).from_address(base)
  for s in secs:
    if s.index in offsets and s.type != SHT_NOBITS:  # (a c_char array's slice takes bytes, length checked; typeshed says a list)
      image[offsets[s.index]:offsets[s.index] + s.size] = obj[s.offset:s.offset + s.size]  # type: ignore[call-overload]

  def address(si: int) -> int:
    s = syms[si]
    if s.shndx == SHN_UNDEF:
      if (a := lookup(s.name)) is not None: return a
      if s.bind == STB_WEAK: return 0
      raise UndefinedSymbol(f"undefined symbol: {s.name} (the kernel calls a function that does not exist)")
    if s.shndx == SHN_ABS: return s.value
    if s.shndx >= SHN_LORESERVE or s.shndx not in offsets:
      raise ElfLoadError(f"symbol {s.name or si} lives in section {s.shndx}, which is not loaded")
    return base + offsets[s.shndx] + s.value

  jump_slot = {si: base + jump_at + JUMP_ENTRY * i for i, si in enumerate(jumps)}
  for si, slot in jump_slot.items():  # jmp *0(%rip), then the address it reads, then int3 padding
    struct.pack_into("<6sQ2s", image, slot - base, b"\xff\x25\x00\x00\x00\x00", address(si), b"\xcc\xcc")
  got_slot = {si: base + got_at + 8 * i for i, si in enumerate(gots)}
  for si, slot in got_slot.items(): struct.pack_into("<Q", image, slot - base, address(si))

  for shndx, r_offset, rtype, si, addend in relocs:
    if rtype == 0: continue
    where = offsets[shndx] + r_offset
    place = base + where
    if rtype == R_64: struct.pack_into("<Q", image, where, (address(si) + addend) & (2**64 - 1))
    elif rtype == R_PC64: struct.pack_into("<q", image, where, address(si) + addend - place)
    else:
      if rtype == R_PLT32 and si in jump_slot: target = jump_slot[si]
      elif rtype in GOT_TYPES: target = got_slot[si]
      else: target = address(si)  # PC32, and PLT32 to a function of the object itself
      disp = target + addend - place
      if not -2**31 <= disp < 2**31:
        raise ElfLoadError(f"R_X86_64_{R_NAMES[rtype]} to {syms[si].name or 'a section'}: {hex(target)} is out of 32-bit reach of {hex(place)}")
      struct.pack_into("<i", image, where, disp)

  return {s.name: address(i) for i, s in enumerate(syms) if s.bind in (STB_GLOBAL, STB_WEAK) and s.shndx != SHN_UNDEF and s.name}
