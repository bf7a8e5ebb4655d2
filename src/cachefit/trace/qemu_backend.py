"""Trace field accesses of an unmodified binary in QEMU with the cachefit TCG plugin.

The plugin (runtime/qemu/cachefit_trace.c) implements paper 000 §IV inside the emulator:
invocations (kernel entry -> exit in system mode, entry-function call -> return in user mode),
a phase between two guest events, object roles, quadruples, per-type sequences with counts
and the runaway cut-off. This module prepares what the plugin needs from the ELF file (symbol
addresses, static objects and object areas of the target types, their sizes from DWARF),
runs the command with and without the plugin, and writes the profile (format
`cachefit-profile` v1, `"backend": "qemu"`) with the field layouts from DWARF.

Configuration keys (`cachefit.toml`, `[trace]` and `[trace.qemu]`) are described in
docs/qemu-tracing.md. Entry point: `trace_qemu(command, config, out_path)`.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.errors import AmbiguousType, ToolMissing, UserError
from cachefit.input_files import require_file
from cachefit.model.profile import (
    Access,
    AccessSequence,
    FieldSpan,
    Profile,
    TypeProfile,
    now_iso,
    save,
)
from cachefit.model.type_names import without_kind_keywords
from cachefit.scratch import scratch_directory

REPO_ROOT = Path(__file__).resolve().parents[3]
PLUGIN_DIR = REPO_ROOT / "runtime" / "qemu"
PLUGIN_LIB = PLUGIN_DIR / "build" / "libcachefit_trace.so"

DEFAULT_MAX_ACCESSES = 4096
DEFAULT_MAX_OBJECTS = 64
DEFAULT_MAX_SEQUENCES = 1_000_000
DEFAULT_TIMEOUT = 600.0


# ------------------------------------------------------------------------------------------
# the plugin library


def build_plugin(quiet: bool = True) -> Path:
    """Builds runtime/qemu (fetching qemu-plugin.h if needed) and returns the library path."""
    if shutil.which("make") is None:
        raise ToolMissing("make is not installed", "apt-get install make")
    proc = subprocess.run(["make", "-C", str(PLUGIN_DIR)], capture_output=quiet, text=True)
    if proc.returncode != 0 or not PLUGIN_LIB.exists():
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-8:] if quiet else []
        raise ToolMissing("cannot build the QEMU plugin in runtime/qemu",
                          "run `make -C runtime/qemu` and see its error", details=tail)
    return PLUGIN_LIB


# ------------------------------------------------------------------------------------------
# ELF: symbols, segments, DWARF types and variables


@dataclass
class Symbol:
    name: str
    value: int
    size: int


@dataclass
class ElfInfo:
    path: str
    bits: int
    machine: str
    pie: bool
    entry: int
    symbols: dict[str, Symbol]
    exec_segments: list[tuple[int, int]]
    _demangled: dict[str, str] | None = None

    def demangled(self) -> dict[str, str]:
        """Demangled name (with and without the parameter list) -> mangled name."""
        if self._demangled is None:
            self._demangled = {}
            mangled = [n for n in self.symbols if n.startswith("_Z")]
            filt = shutil.which("c++filt")
            if mangled and filt:
                out = subprocess.run([filt], input="\n".join(mangled), capture_output=True,
                                     text=True).stdout.splitlines()
                for m, d in zip(mangled, out, strict=False):
                    self._demangled.setdefault(d, m)
                    self._demangled.setdefault(d.split("(", 1)[0], m)
        return self._demangled

    def lookup(self, name: str) -> Symbol | None:
        sym = self.symbols.get(name)
        if sym is None:
            mangled = self.demangled().get(name)
            sym = self.symbols.get(mangled) if mangled else None
        return sym


_ELF_CACHE: dict[tuple[str, float], ElfInfo] = {}


def read_elf(path: str) -> ElfInfo:
    """Symbols (functions and objects with their sizes), entry and executable segments."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    p = Path(path)
    require_file(p, "give the ELF file of the traced program")
    key = (str(p.resolve()), p.stat().st_mtime)
    if key in _ELF_CACHE:
        return _ELF_CACHE[key]
    try:
        with open(p, "rb") as fh:
            elf = ELFFile(fh)
            symbols: dict[str, Symbol] = {}
            for sec_name in (".symtab", ".dynsym"):
                sec = elf.get_section_by_name(sec_name)
                if sec is None:
                    continue
                for s in sec.iter_symbols():
                    if s.name and s["st_shndx"] != "SHN_UNDEF" and \
                            s["st_info"]["type"] in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE"):
                        symbols.setdefault(s.name, Symbol(s.name, s["st_value"], s["st_size"]))
            segs = [(seg["p_vaddr"], seg["p_vaddr"] + seg["p_memsz"]) for seg in elf.iter_segments()
                    if seg["p_type"] == "PT_LOAD" and seg["p_flags"] & 1 and seg["p_memsz"]]
            info = ElfInfo(str(p), elf.elfclass, elf["e_machine"], elf["e_type"] == "ET_DYN",
                           elf["e_entry"], symbols, segs)
    except ELFError as exc:
        raise UserError(f"{path}: not an ELF file ({exc})",
                        "give the traced program's ELF") from None
    _ELF_CACHE[key] = info
    return info


@dataclass
class DwarfObject:
    """A statically allocated variable of a target type, or an array of them (an area)."""

    name: str
    address: int
    type_name: str
    count: int | None  # None: one object; else: array elements
    stride: int


_RECORD_TAGS = ("DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type")


def _is_definition(die) -> bool:
    return "DW_AT_declaration" not in die.attributes and "DW_AT_byte_size" in die.attributes


@dataclass
class DwarfScan:
    sizes: dict[str, int] = field(default_factory=dict)
    variables: list[DwarfObject] = field(default_factory=list)


def scan_dwarf(elf_path: str, type_names: Iterable[str], want_variables: bool) -> DwarfScan:
    """Sizes of the target types, and the static variables of them (layouts: read_record).
    Names, qualifiers and array bounds are the front end's reading of the DWARF."""
    from cachefit.frontend.dwarf_records import open_dwarf

    targets = {without_kind_keywords(t): t for t in type_names}
    scan = DwarfScan()
    shapes: dict[str, tuple[int, str]] = {}
    with open_dwarf(elf_path) as reader:    # UserError when there is no DWARF
        for cu in reader.dwarf.iter_CUs():
            for die in cu.iter_DIEs():
                if die.tag in _RECORD_TAGS:
                    if len(scan.sizes) == len(targets) and not want_variables:
                        continue
                    if "DW_AT_name" not in die.attributes or not _is_definition(die):
                        continue
                    q = reader.qualified_name(die)
                    if q not in targets:
                        continue
                    size = die.attributes["DW_AT_byte_size"].value
                    unit = cu.get_top_DIE().attributes.get("DW_AT_name")
                    unit_name = unit.value.decode(errors="replace") if unit else "?"
                    if targets[q] not in scan.sizes:
                        scan.sizes[targets[q]] = size
                        shapes[targets[q]] = (size, unit_name)
                    elif shapes[targets[q]][0] != size:
                        raise AmbiguousType(
                            f"{elf_path}: type {q} has different sizes in "
                            f"{shapes[targets[q]][1]} and {unit_name}",
                            "the program breaks the one-definition rule")
                elif want_variables and die.tag == "DW_TAG_variable":
                    obj = _variable_object(reader, die, targets)
                    if obj is not None:
                        scan.variables.append(obj)
            if len(scan.sizes) == len(targets) and not want_variables:
                break
    missing = [t for t in targets.values() if t not in scan.sizes]
    if missing:
        raise UserError(f"{elf_path}: no definition of type {', '.join(missing)} in its DWARF",
                        "check [trace] types (qualified names, e.g. ns::task)")
    # a variable seen in several units (COMDAT, headers) once
    seen: set[tuple[int, str]] = set()
    unique = []
    for v in scan.variables:
        if (v.address, v.type_name) not in seen:
            seen.add((v.address, v.type_name))
            unique.append(v)
    scan.variables = unique
    return scan


def _variable_object(reader: Any, die, targets: Mapping[str, str]) -> DwarfObject | None:
    loc = die.attributes.get("DW_AT_location")
    if loc is None or loc.form not in ("DW_FORM_exprloc", "DW_FORM_block1"):
        return None
    expr = loc.value
    if not expr or expr[0] != 0x03:  # DW_OP_addr
        return None
    n = len(expr) - 1
    address = int.from_bytes(bytes(expr[1:1 + n]), "little")
    decl = die
    if "DW_AT_type" not in die.attributes and "DW_AT_specification" in die.attributes:
        decl = die.get_DIE_from_attribute("DW_AT_specification")
    if "DW_AT_type" not in decl.attributes:
        return None
    t = reader.strip(reader.type_of(decl))
    count = None
    if t is not None and t.tag == "DW_TAG_array_type":
        count = 1   # all dimensions; 0 for a flexible array member
        for d in reader.dims(t):
            count *= d or 0
        t = reader.strip(reader.type_of(t))
    if t is None or t.tag not in _RECORD_TAGS:
        return None
    q = reader.qualified_name(t)
    if q not in targets or not count and count is not None:
        return None
    name = decl.attributes.get("DW_AT_name")
    stride = t.attributes["DW_AT_byte_size"].value if "DW_AT_byte_size" in t.attributes else 0
    return DwarfObject(name.value.decode() if name else hex(address), address, targets[q], count,
                       stride)


def record_layout(elf_path: str, type_name: str) -> Any:
    """The type's layout from the DWARF front end (which checks that all units agree)."""
    from cachefit.frontend.dwarf_records import read_record

    return read_record(elf_path, type_name)


# ------------------------------------------------------------------------------------------
# configuration


@dataclass
class Setup:
    """Everything resolved from the configuration: what the plugin and the runner need."""

    mode: str  # "system" | "user"
    elf: ElfInfo
    command: list[str]  # the command without the plugin
    plugin_insert: int  # index in `command` where `-plugin ...` goes
    types: list[str]
    sizes: dict[str, int]
    records: dict[str, Any]
    lines: list[str]  # plugin config lines (without `output`)
    objects: list[dict[str, Any]]
    areas: list[dict[str, Any]]
    inputs: list[tuple[re.Pattern[str], bytes]]
    stop_after: re.Pattern[str] | None
    timeout: float
    overhead: bool
    log_path: str | None
    phase: dict[str, str]
    max_accesses: int
    max_objects: int
    entry: str | None = None
    layout_source: dict[str, str] = field(default_factory=dict)


def _int(value: Any, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            pass
    raise UserError(f"[trace.qemu] {what}: expected an integer or \"0x...\" string, got {value!r}")


_ADDR_RE = re.compile(r"^\s*(?P<sym>[^+]+?)\s*(?:\+\s*(?P<off>0x[0-9a-fA-F]+|\d+))?\s*$")


def resolve_address(spec: Any, elf: ElfInfo, what: str) -> tuple[int, bool]:
    """An address given as an integer, "0x..." (absolute) or "symbol[+offset]" (in `elf`).

    Returns (address, relative): relative addresses are link-time addresses of a
    position-independent program, rebased by the plugin at run time.
    """
    if isinstance(spec, int) and not isinstance(spec, bool):
        return spec, False
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"[trace.qemu] {what}: expected an address or a symbol, got {spec!r}")
    try:
        return int(spec, 0), False
    except ValueError:
        pass
    m = _ADDR_RE.match(spec)
    sym = elf.lookup(m.group("sym")) if m else None
    if sym is None:
        close = sorted(n for n in elf.symbols if spec.split("+")[0].strip() in n)[:5]
        raise UserError(f"[trace.qemu] {what}: no symbol {spec!r} in {elf.path}",
                        "give a symbol of that ELF or an address",
                        details=[f"similar: {', '.join(close)}"] if close else [])
    off = int(m.group("off"), 0) if m.group("off") else 0
    return sym.value + off, elf.pie


def _addr_text(addr: int, rel: bool) -> str:
    return ("r" if rel else "") + hex(addr)


def _ranges(value: Any, what: str, elf: ElfInfo) -> list[str]:
    """[[lo, hi], ...] (or one [lo, hi]); bounds are addresses or symbols -> "LO HI" texts."""
    if value and isinstance(value, list) and not isinstance(value[0], list):
        value = [value]
    out = []
    for r in value or []:
        if not isinstance(r, list) or len(r) != 2:
            raise UserError(f"[trace.qemu] {what}: expected [lo, hi] pairs, got {r!r}")
        lo, lrel = resolve_address(r[0], elf, what)
        hi, hrel = resolve_address(r[1], elf, what)
        if hi <= lo:
            raise UserError(f"[trace.qemu] {what}: empty range {r!r}")
        out.append(f"{_addr_text(lo, lrel)} {_addr_text(hi, hrel)}")
    return out


def _is_qemu_system(arg0: str) -> bool:
    return os.path.basename(arg0).startswith("qemu-system-")


def _is_qemu_user(arg0: str) -> bool:
    b = os.path.basename(arg0)
    return b.startswith("qemu-") and not b.startswith("qemu-system-")


_QEMU_USER_OPTS_WITH_VALUE = {"-L", "-s", "-cpu", "-E", "-U", "-0", "-B", "-R", "-d", "-D",
                              "-p", "-plugin", "-r", "-trace", "-g"}


def _user_program(command: list[str]) -> tuple[list[str], int, str]:
    """(command under qemu user mode, index to insert -plugin, program path)."""
    if _is_qemu_user(command[0]):
        i = 1
        while i < len(command) and command[i].startswith("-"):
            i += 2 if command[i] in _QEMU_USER_OPTS_WITH_VALUE else 1
        if i >= len(command):
            raise UserError("the qemu user-mode command names no program")
        return list(command), 1, command[i]
    program = command[0]
    path = program if os.sep in program else (shutil.which(program) or program)
    elf = read_elf(path)
    qemu = {"EM_X86_64": "qemu-x86_64", "EM_386": "qemu-i386", "EM_AARCH64": "qemu-aarch64",
            "EM_ARM": "qemu-arm", "EM_RISCV": f"qemu-riscv{elf.bits}"}.get(elf.machine)
    if qemu is None:
        raise UserError(f"{path}: no QEMU user-mode emulator known for {elf.machine}")
    if shutil.which(qemu) is None:
        raise ToolMissing(f"{qemu} is not installed", "apt-get install qemu-user")
    return [qemu, path, *command[1:]], 1, path


def prepare(command: list[str], config: Mapping[str, Any]) -> Setup:
    """Resolves `command` and the configuration into a `Setup` (reads the ELF and DWARF)."""
    if not command:
        raise UserError("no command to trace", "give a qemu-system-* command line or a program")
    trace = config.get("trace", config) if isinstance(config, Mapping) else {}
    qcfg = dict(trace.get("qemu", {}))
    types = trace.get("types") or qcfg.get("types")
    if isinstance(types, str):
        types = [types]
    if not types:
        raise UserError("[trace] types is empty",
                        'name the types to trace, e.g. types = ["tcb_t"]')

    if _is_qemu_system(command[0]):
        mode = "system"
        if shutil.which(command[0]) is None and not os.path.exists(command[0]):
            raise ToolMissing(f"{command[0]} is not installed", "apt-get install qemu-system-x86")
        kernel = qcfg.get("kernel")
        if not kernel:
            raise UserError("[trace.qemu] kernel is not set",
                            "give the kernel ELF (with DWARF) traced in system mode")
        elf = read_elf(str(kernel))
        cmd, insert = list(command), 1
    else:
        mode = "user"
        cmd, insert, program = _user_program(list(command))
        elf = read_elf(str(qcfg.get("binary", program)))

    lines: list[str] = [f"mode {mode}"]
    entry_name = None
    want_vars = bool(qcfg.get("auto_objects", True))
    scan = scan_dwarf(elf.path, types, want_vars)
    sizes = scan.sizes
    records = {t: record_layout(elf.path, t) for t in types}
    layout_source = {t: "dwarf_records" for t in types}
    index = {t: i for i, t in enumerate(types)}
    index.update({without_kind_keywords(t): i for i, t in enumerate(types)})
    for i, t in enumerate(types):
        lines.append(f"type {i} {sizes[t]}")

    def type_index(value: Any, what: str) -> int:
        if value is None and len(types) == 1:
            return 0
        if value not in index:
            raise UserError(f"[trace.qemu] {what}: type {value!r} is not in [trace] types")
        return index[value]

    objects: list[dict[str, Any]] = []
    areas: list[dict[str, Any]] = []
    # static objects and arrays of the target types, from DWARF
    for v in scan.variables:
        t = index[v.type_name]
        if v.count is None:
            objects.append({"name": v.name, "type": v.type_name, "address": v.address,
                            "extent": sizes[v.type_name], "source": "dwarf"})
            lines.append(f"object {t} {_addr_text(v.address, elf.pie)} {sizes[v.type_name]}")
        else:
            areas.append({"name": v.name, "type": v.type_name, "base": v.address,
                          "stride": v.stride, "count": v.count, "source": "dwarf"})
            lines.append(f"area {t} {_addr_text(v.address, elf.pie)} {v.stride} {v.count}")
    # declared objects: [[trace.qemu.object]] symbol/address, type, extent
    for k, o in enumerate(qcfg.get("object", []) or []):
        what = f"object[{k}]"
        t = type_index(o.get("type"), what)
        spec = o.get("symbol", o.get("address"))
        addr, rel = resolve_address(spec, elf, what)
        sym = elf.lookup(o["symbol"]) if "symbol" in o else None
        extent = _int(o["extent"], what) if "extent" in o else max(
            sym.size if sym else 0, sizes[types[t]])
        objects.append({"name": str(spec), "type": types[t], "address": addr, "extent": extent,
                        "source": "config"})
        lines.append(f"object {t} {_addr_text(addr, rel)} {extent}")
    # declared object areas: [[trace.qemu.area]] type, base, stride, count
    for k, a in enumerate(qcfg.get("area", []) or []):
        what = f"area[{k}]"
        t = type_index(a.get("type"), what)
        base, rel = resolve_address(a.get("base"), elf, what)
        stride = _int(a.get("stride", sizes[types[t]]), what)
        if "count" in a:
            count = _int(a["count"], what)
        elif "end" in a:
            count = (_int(a["end"], what) - base) // stride
        else:
            raise UserError(f"[trace.qemu] {what}: give count or end")
        if stride <= 0 or count <= 0:
            raise UserError(f"[trace.qemu] {what}: stride and count must be positive")
        areas.append({"type": types[t], "base": base, "stride": stride, "count": count,
                      "source": "config"})
        lines.append(f"area {t} {_addr_text(base, rel)} {stride} {count}")
    if not objects and not areas:
        raise UserError(f"no objects of {', '.join(types)} to trace in {elf.path}",
                        "declare [[trace.qemu.object]] or [[trace.qemu.area]] entries")

    if mode == "system":
        kr = _ranges(qcfg.get("kernel_range"), "kernel_range", elf) or \
            [f"{hex(lo)} {hex(hi)}" for lo, hi in elf.exec_segments]
        lines += [f"kernel {r}" for r in kr]
    else:
        entry = qcfg.get("entry", trace.get("entry"))
        if not entry:
            raise UserError("[trace] entry is not set",
                            "name the function whose call -> return is one invocation")
        addr, rel = resolve_address(entry, elf, "entry")
        lines.append(f"entry {_addr_text(addr, rel)}")
        entry_name = str(entry)
        if elf.pie:
            lines.append(f"link_code {hex(min(lo for lo, _ in elf.exec_segments))}")
    lines += [f"filter {r}" for r in _ranges(qcfg.get("traced_code"), "traced_code", elf)]

    phase: dict[str, str] = {}
    phase_elf = read_elf(str(qcfg["phase_elf"])) if qcfg.get("phase_elf") else elf
    for key in ("phase_start", "phase_end"):
        if qcfg.get(key) is not None:
            if phase_elf.pie and phase_elf is not elf:
                raise UserError(f"[trace.qemu] {key}: phase_elf {phase_elf.path} is "
                                "position-independent", "give an address instead")
            addr, rel = resolve_address(qcfg[key], phase_elf, key)
            phase[key] = f"{qcfg[key]} ({hex(addr)})"
            lines.append(f"{key} {_addr_text(addr, rel)}")

    max_accesses = _int(qcfg.get("max_accesses", DEFAULT_MAX_ACCESSES), "max_accesses")
    max_objects = _int(qcfg.get("max_objects", DEFAULT_MAX_OBJECTS), "max_objects")
    max_sequences = _int(qcfg.get("max_sequences", DEFAULT_MAX_SEQUENCES), "max_sequences")
    lines += [f"max_accesses {max_accesses}", f"max_objects {max_objects}",
              f"max_sequences {max_sequences}"]

    inputs = []
    for k, item in enumerate(qcfg.get("input", []) or []):
        if "send" not in item:
            raise UserError(f"[trace.qemu] input[{k}]: no 'send'")
        inputs.append((re.compile(item.get("after", "")), str(item["send"]).encode()))
    stop = qcfg.get("stop_after")
    return Setup(mode=mode, elf=elf, command=cmd, plugin_insert=insert, types=list(types),
                 sizes=sizes, records=records, lines=lines, objects=objects, areas=areas,
                 inputs=inputs, stop_after=re.compile(stop) if stop else None,
                 timeout=float(qcfg.get("timeout", DEFAULT_TIMEOUT)),
                 overhead=bool(qcfg.get("overhead", True)), log_path=qcfg.get("log"),
                 phase=phase, max_accesses=max_accesses, max_objects=max_objects,
                 entry=entry_name, layout_source=layout_source)


# ------------------------------------------------------------------------------------------
# running a guest


@dataclass
class RunResult:
    seconds: float  # from start to exit or stop
    returncode: int | None
    output: str
    stopped: str  # "exit" | "stop_after" | "phase-end" | "timeout"
    input_times: list[float] = field(default_factory=list)  # seconds after start, per answer
    # CPU time (user + system, all threads) of the QEMU process: in all (its rusage once it
    # was waited for) and at each answer (/proc/PID/stat; None where it could not be read).
    # Less sensitive to a loaded machine than wall time.
    cpu_seconds: float | None = None
    input_cpu: list[float | None] = field(default_factory=list)

    @property
    def after_input_seconds(self) -> float | None:
        """From the last answer written to the guest to the end (the workload proper)."""
        return self.seconds - self.input_times[-1] if self.input_times else None

    @property
    def after_input_cpu(self) -> float | None:
        """CPU seconds QEMU used from the last answer to the end."""
        if not self.input_cpu or self.input_cpu[-1] is None or self.cpu_seconds is None:
            return None
        return self.cpu_seconds - self.input_cpu[-1]


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a live process (all its threads), from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_guest(command: list[str], inputs: list[tuple[re.Pattern[str], bytes]] | None = None,
              stop_after: re.Pattern[str] | None = None, timeout: float = DEFAULT_TIMEOUT,
              log_path: str | None = None, done_file: str | None = None,
              echo: bool = False) -> RunResult:
    """Runs `command`, answering `inputs` (pattern seen in the output since the previous
    answer -> bytes written to its stdin) and stopping it when `stop_after` matches the
    output, when `done_file` appears (the plugin wrote its result), or at `timeout`."""
    inputs = list(inputs or [])
    t0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(command, stdin=subprocess.PIPE if inputs else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    chunks: list[bytes] = []
    lock = threading.Lock()
    log = open(log_path, "wb") if log_path else None  # noqa: SIM115

    def reader() -> None:
        assert proc.stdout is not None
        while True:
            data = proc.stdout.read1(65536)  # type: ignore[attr-defined]
            if not data:
                break
            with lock:
                chunks.append(data)
            if log:
                log.write(data)
                log.flush()
            if echo:
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    stopped = "exit"
    mark = 0  # output position after the last answered prompt
    input_times: list[float] = []
    input_cpu: list[float | None] = []
    try:
        while proc.poll() is None:
            with lock:
                text = b"".join(chunks).decode("latin-1")
            if inputs:
                m = inputs[0][0].search(text, mark)
                if m:
                    mark = m.end()
                    assert proc.stdin is not None
                    proc.stdin.write(inputs.pop(0)[1])
                    proc.stdin.flush()
                    input_times.append(time.monotonic() - t0)
                    input_cpu.append(_cpu_seconds(proc.pid))
                    continue
            if done_file and os.path.exists(done_file):
                stopped = "phase-end"
                break
            if stop_after and not inputs and stop_after.search(text, mark):
                stopped = "stop_after"
                if done_file:  # let the plugin reach its phase end (it writes its result)
                    deadline = time.monotonic() + 10
                    while not os.path.exists(done_file) and time.monotonic() < deadline \
                            and proc.poll() is None:
                        time.sleep(0.05)
                break
            if time.monotonic() - t0 > timeout:
                stopped = "timeout"
                break
            time.sleep(0.01)
        elapsed = time.monotonic() - t0
        if proc.poll() is None:
            _terminate(proc)
        else:
            elapsed = time.monotonic() - t0
        th.join(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
        if log:
            log.close()
    # QEMU has been waited for: its CPU time is in the children's usage (it has no children
    # of its own, and this process runs one guest at a time)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    return RunResult(elapsed, proc.returncode, b"".join(chunks).decode("latin-1"), stopped,
                     input_times, cpu if proc.returncode is not None else None, input_cpu)


def _slowdown(overhead: dict[str, Any], unit: str, plain: float, traced: float,
              plain_workload: float | None, traced_workload: float | None) -> float | None:
    """Adds both runs' figures in `unit` ("seconds", "cpu_seconds") to `overhead`; the
    slowdown on the workload when both runs have one, else on the whole runs."""
    overhead[f"plain_{unit}"] = round(plain, 3)
    overhead[f"traced_{unit}"] = round(traced, 3)
    slowdown = traced / plain if plain else None
    if plain_workload is not None and traced_workload is not None:
        overhead[f"plain_workload_{unit}"] = round(plain_workload, 3)
        overhead[f"traced_workload_{unit}"] = round(traced_workload, 3)
        slowdown = traced_workload / plain_workload if plain_workload else None
    return slowdown


def _cpu_overhead(plain: RunResult, traced: RunResult, overhead: dict[str, Any]) -> float | None:
    """Adds the CPU times of both runs to `overhead`; the CPU slowdown (on the workload when
    there is one, else on the whole runs), or None when /proc gave no figures."""
    if plain.cpu_seconds is None or traced.cpu_seconds is None:
        return None
    return _slowdown(overhead, "cpu_seconds", plain.cpu_seconds, traced.cpu_seconds,
                     plain.after_input_cpu, traced.after_input_cpu)


def _terminate(proc: subprocess.Popen) -> None:
    """SIGTERM (QEMU shuts down cleanly and runs the plugin's exit hook), then SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ------------------------------------------------------------------------------------------
# the plugin's result -> profile


def parse_raw(text: str) -> dict[str, Any]:
    """Parses the plugin's output file (format in docs/qemu-tracing.md)."""
    lines = text.splitlines()
    if not lines or lines[0].split() != ["cachefit-qemu-trace", "1"]:
        raise UserError("the QEMU plugin's output has an unknown format")
    raw: dict[str, Any] = {"types": {}, "sequences": [], "complete": False}
    for line in lines[1:]:
        w = line.split()
        if not w:
            continue
        if w[0] == "end":
            raw["complete"] = True
        elif w[0] == "type":
            t = int(w[1])
            kv = dict(zip(w[2::2], w[3::2], strict=False))
            raw["types"][t] = {k: int(v) for k, v in kv.items()}
        elif w[0] == "seq":
            accesses = []
            for q in w[3:]:
                role, off, size, mode = q.split(":")
                accesses.append([int(role), int(off), int(size), mode])
            raw["sequences"].append((int(w[1]), int(w[2]), accesses))
        elif w[0] in ("mode", "phase", "written_at"):
            raw[w[0]] = w[1]
        elif w[0] == "phase_seconds":
            raw[w[0]] = float(w[1])
        else:
            raw[w[0]] = int(w[1])
    if not raw["complete"]:
        raise UserError("the QEMU plugin's output is truncated")
    return raw


def build_profile(raw: Mapping[str, Any], setup: Setup, cache_line: int = 64) -> Profile:
    """The profile of the plugin's result, with the field layouts from DWARF."""
    profile = Profile(invocations=raw.get("invocations", 0), cache_line=cache_line)
    for i, t in enumerate(setup.types):
        rec = setup.records.get(t)
        st = raw["types"].get(i, {})
        profile.types[t] = TypeProfile(
            name=t, size=setup.sizes[t],
            fields=[FieldSpan(f.name, f.offset, f.size) for f in (rec.fields if rec else [])],
            sequences=[AccessSequence(c, tuple(Access(*a) for a in acc))
                       for ti, c, acc in raw["sequences"] if ti == i],
            runaway=st.get("runaway", 0), outside_objects=st.get("outside_objects", 0),
            table_full=st.get("table_full", 0))
    return profile


# ------------------------------------------------------------------------------------------
# the entry point


def trace_qemu(command: list[str], config: dict, out_path: str) -> dict:
    """Traces `command` in QEMU with the cachefit plugin and writes the profile to `out_path`.

    `command` is a `qemu-system-*` command line (the plugin is inserted after argv[0]), a
    `qemu-<arch>` user-mode command line, or a Linux program (run under qemu-x86_64 or
    qemu-i386 by its ELF class). `config` is the parsed cachefit.toml (or its `[trace]` table).
    Unless `[trace.qemu] overhead = false`, the command is first run without the plugin to
    measure the plugin's slowdown. Returns the profile written.
    """
    setup = prepare(list(command), config)
    lib = build_plugin()
    cache_line = int(config.get("cache_line", config.get("trace", {}).get("cache_line", 64))) \
        if isinstance(config, Mapping) else 64
    plain = None
    if setup.overhead:
        plain = run_guest(setup.command, setup.inputs, setup.stop_after, setup.timeout,
                          log_path=f"{setup.log_path}.plain" if setup.log_path else None)
    with scratch_directory("cachefit-qemu-") as tmp:
        cfg_path = os.path.join(tmp, "plugin.cfg")
        raw_path = os.path.join(tmp, "trace.txt")
        with open(cfg_path, "w") as fh:
            fh.write("\n".join([*setup.lines, f"output {raw_path}"]) + "\n")
        cmd = list(setup.command)
        cmd[setup.plugin_insert:setup.plugin_insert] = ["-plugin", f"{lib},config={cfg_path}"]
        traced = run_guest(cmd, setup.inputs, setup.stop_after, setup.timeout,
                           log_path=setup.log_path,
                           done_file=raw_path if setup.mode == "system" and
                           "phase_end" in setup.phase else None)
        if not os.path.exists(raw_path):
            tail = traced.output.strip().splitlines()[-10:]
            raise UserError(f"the QEMU plugin wrote no result ({traced.stopped}, "
                            f"exit status {traced.returncode})",
                            "see QEMU's output below", details=tail)
        with open(raw_path) as fh:
            raw = parse_raw(fh.read())
    profile = build_profile(raw, setup, cache_line)
    # The whole runs, and (when the guest is driven by answers to prompts) the part after
    # the last answer: for a system that boots first, that is the workload the phase covers.
    overhead: dict[str, Any] = {"traced_seconds": round(traced.seconds, 3)}
    slowdown = slowdown_cpu = None
    if plain is not None:
        slowdown = _slowdown(overhead, "seconds", plain.seconds, traced.seconds,
                             plain.after_input_seconds, traced.after_input_seconds)
        slowdown_cpu = _cpu_overhead(plain, traced, overhead)
    qemu: dict[str, Any] = {
        "mode": setup.mode,
        "elf": os.path.abspath(setup.elf.path),
        "phase": setup.phase or None,
        "phase_reached": raw.get("phase"),
        "objects": setup.objects,
        "areas": setup.areas,
        "max_accesses": setup.max_accesses,
        "max_objects": setup.max_objects,
        "layout_source": setup.layout_source,
        "unfinished_invocations": raw.get("unfinished", 0),
        "invocations_before_phase": raw.get("before_phase", 0),
        "traced_accesses": raw.get("accesses", 0),
        "stopped": traced.stopped,
        "exit_status": traced.returncode,
        "slowdown": round(slowdown, 2) if slowdown is not None else None,
    }
    if plain is not None:
        qemu["slowdown_cpu"] = round(slowdown_cpu, 2) if slowdown_cpu is not None else None
        qemu["plain_stopped"] = plain.stopped
        qemu["plain_exit_status"] = plain.returncode
    if raw.get("phase_seconds") is not None:
        qemu["traced_phase_seconds"] = round(raw["phase_seconds"], 3)
    profile.metadata = {
        "backend": "qemu",
        "commands": [list(command)],
        "date": now_iso(),
        "entry": [setup.entry] if setup.entry else [],
        "overhead": overhead,
        "processes": 1,
        "programs": [os.path.abspath(setup.elf.path)],
        "qemu": qemu,
    }
    save(profile, out_path)
    return profile.to_json()


# ------------------------------------------------------------------------------------------
# command line (also `cachefit trace --qemu`): python -m cachefit.trace.qemu_backend


def main(argv: list[str] | None = None) -> int:
    import argparse

    from cachefit.errors import CachefitError
    from cachefit.model.project_toml import parse_toml, read_project_text

    ap = argparse.ArgumentParser(prog="python -m cachefit.trace.qemu_backend",
                                 description="trace a command in QEMU with the cachefit plugin")
    ap.add_argument("--config", default="cachefit.toml", help="project file with [trace]")
    ap.add_argument("-o", "--out", required=True, help="profile to write")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        config = parse_toml(read_project_text(Path(args.config)), Path(args.config))
        profile = trace_qemu(command, config, args.out)
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"cachefit: error: {exc}", file=sys.stderr)
        return 2
    print(summary(profile))
    return 0


def summary(profile: Mapping[str, Any]) -> str:
    out = [f"{profile['invocations']} invocations"]
    for name, t in profile["types"].items():
        seqs = t["sequences"]
        out.append(f"{name}: {len(seqs)} unique sequences, "
                   f"{sum(s['count'] for s in seqs)} recorded, dropped {t['dropped']}")
    ov = profile.get("overhead", {})
    if "plain_workload_seconds" in ov:
        out.append(f"workload phase: plain {ov['plain_workload_seconds']} s, traced "
                   f"{ov['traced_workload_seconds']} s, slowdown "
                   f"{profile.get('qemu', {}).get('slowdown')}x (whole runs: plain "
                   f"{ov['plain_seconds']} s, traced {ov['traced_seconds']} s)")
    elif "plain_seconds" in ov:
        out.append(f"plain {ov['plain_seconds']} s, traced {ov['traced_seconds']} s, "
                   f"slowdown {profile.get('qemu', {}).get('slowdown')}x")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
