"""SoC descriptions read from data, by one loader: a preset of ``npu/data/soc.toml``, a user's own
TOML file in the same schema (docs/npu.md, "Your own SoC"), or a Zephyr build's devicetree
(npu/dts.py); and the QEMU board an image of a preset boots on (``npu/data/qemu.toml``). Every
key of a SoC description is checked; a bad one is one line naming the file and the key
(`memories[2].origin: expected an integer`)."""
from __future__ import annotations

import functools
import tomllib
from dataclasses import replace
from pathlib import Path

from npu.dts import from_dts
from npu.errors import InputError
from npu.hw import DATA, Accelerator
from npu.soc import PortRule, QemuBoard, QemuMemory, Remap, Soc, SocMemory

SOC_TOML = DATA / "soc.toml"
QEMU_TOML = DATA / "qemu.toml"

FAMILIES = ("ethos-u55", "ethos-u65", "ethos-u85")
KINDS = ("Sram", "Dram", "OnChipFlash", "OffChipFlash", "Tcm", "Bram", "Rom")
PRESET_KEYS = {"name", "npus", "npus_source", "ports", "areas", "areas_source", "unmapped", "sources",
               "memories", "aliases", "npu_base", "npu_base_source", "accelerators", "remap",
               "port_rule", "assumptions", "npu_irq", "npu_irq_source", "vectors", "vectors_source"}
MEMORY_KEYS = {"name", "origin", "length", "kind", "npu", "ports", "assumed_ports", "source", "why",
               "assumption", "timing_assumption", "timing"}


class _Checker:
    def __init__(self, path, preset: str | None):
        self.path, self.prefix = path, f"[{preset}] " if preset else ""

    def fail(self, key: str, what: str):
        raise InputError(self.path, f"{self.prefix}{key}: {what}")

    def get(self, table: dict, key: str, where: str, kind, required=False, default=None):
        if key not in table:
            if required:
                self.fail(f"{where}{key}", "missing")
            return default
        value = table[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            self.fail(f"{where}{key}", f"expected a non-negative integer, got {value!r}")
        if kind is str and not isinstance(value, str):
            self.fail(f"{where}{key}", f"expected a string, got {value!r}")
        if kind is bool and not isinstance(value, bool):
            self.fail(f"{where}{key}", f"expected true or false, got {value!r}")
        if kind is list and not (isinstance(value, list) and all(isinstance(v, (str, int)) for v in value)):
            self.fail(f"{where}{key}", f"expected a list, got {value!r}")
        if kind == "tables" and not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
            self.fail(f"{where}{key}", f"expected an array of tables ([[{key}]]), got {value!r}")
        if kind is dict and not isinstance(value, dict):
            self.fail(f"{where}{key}", f"expected a table, got {value!r}")
        return value

    def unknown_keys(self, table: dict, allowed: set, where: str):
        extra = sorted(set(table) - allowed)
        if extra:
            self.fail(f"{where}{extra[0]}", f"unknown key (expected one of {', '.join(sorted(allowed))})")


def build(name: str, s: dict, path, preset: str | None = None, origin: str = "preset") -> Soc:
    """A Soc from one preset table `s` (file `path`), every key checked."""
    c = _Checker(path, preset)
    if not isinstance(s, dict):
        c.fail(name, "expected a table")
    c.unknown_keys(s, PRESET_KEYS, "")
    sources = c.get(s, "sources", "", dict, default={})
    cite = lambda keys: tuple(sources.get(k, k) for k in keys)  # noqa: E731
    npus = tuple(c.get(s, "npus", "", list, default=list(FAMILIES)))
    for n in npus:
        if n not in FAMILIES:
            c.fail("npus", f"{n!r} is not one of {', '.join(FAMILIES)}")
    ports = tuple(c.get(s, "ports", "", list, default=[]))
    raw = c.get(s, "memories", "", "tables", required=True)
    mems = tuple(_memory(c, m, k, ports, cite) for k, m in enumerate(raw))
    by_name = {m.name: m for m in mems}
    aliases = []
    for k, a in enumerate(c.get(s, "aliases", "", "tables", default=[])):
        where = f"aliases[{k}]."
        c.unknown_keys(a, {"name", "origin", "length", "of", "source"}, where)
        of = c.get(a, "of", where, str, required=True)
        if of not in by_name:
            c.fail(f"{where}of", f"names no memory ({', '.join(by_name)})")
        m = by_name[of]
        aliases.append(replace(m, name=c.get(a, "name", where, str, default=f"{of} (alias)"),
                               origin=c.get(a, "origin", where, int, required=True),
                               length=c.get(a, "length", where, int, default=m.length),
                               source=m.source + cite(a.get("source", ())), alias_of=of))
    areas = c.get(s, "areas", "", dict, default={})
    for area, mem in areas.items():
        if area not in ("Axi0", "Axi1") or mem not in by_name:
            c.fail(f"areas.{area}", f"expected Axi0/Axi1 = the name of a memory, got {mem!r}")
    remaps = tuple(_remap(c, r, k, cite) for k, r in
                   enumerate(c.get(s, "remap", "", "tables", default=[])))
    rule = c.get(s, "port_rule", "", dict)
    if rule is not None:
        c.unknown_keys(rule, {"at_or_above", "port", "source"}, "port_rule.")
        port = c.get(rule, "port", "port_rule.", str, required=True)
        if ports and port not in ports:
            c.fail("port_rule.port", f"{port!r} is not one of ports {list(ports)}")
        rule = PortRule(c.get(rule, "at_or_above", "port_rule.", int, required=True), port,
                        cite(rule.get("source", ())))
    bases = c.get(s, "npu_base", "", list, default=[])
    if any(not isinstance(b, int) or isinstance(b, bool) for b in bases):
        c.fail("npu_base", f"expected a list of addresses, got {bases!r}")
    return Soc(c.get(s, "name", "", str, default=name), npus, ports, mems, tuple(aliases), dict(areas),
               c.get(s, "unmapped", "", str, default=""), cite(s.get("npus_source", ())),
               tuple(bases), cite(s.get("npu_base_source", ())),
               tuple(c.get(s, "accelerators", "", list, default=[])), remaps, rule, origin,
               tuple(c.get(s, "assumptions", "", list, default=[])), c.get(s, "npu_irq", "", int),
               c.get(s, "vectors", "", int))


def _memory(c: _Checker, m: dict, k: int, ports, cite) -> SocMemory:
    where = f"memories[{k}]."
    c.unknown_keys(m, MEMORY_KEYS, where)
    kind = c.get(m, "kind", where, str, required=True)
    if kind not in KINDS:
        c.fail(f"{where}kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    reach = c.get(m, "npu", where, bool, default=True)
    documented = tuple(c.get(m, "ports", where, list, default=[]))
    assumed = tuple(c.get(m, "assumed_ports", where, list, default=[]))
    for p in documented + assumed:
        if ports and p not in ports:
            c.fail(f"{where}ports", f"{p!r} is not one of ports {list(ports)}")
    timing = c.get(m, "timing", where, str, default="class")
    if timing not in ("class", "port"):
        c.fail(f"{where}timing", f"expected \"class\" or \"port\", got {timing!r}")
    if not reach and not m.get("why"):
        c.fail(f"{where}why", "missing (a memory the NPU cannot reach says why)")
    return SocMemory(c.get(m, "name", where, str, required=True), c.get(m, "origin", where, int, required=True),
                     c.get(m, "length", where, int, required=True), kind,
                     documented + assumed if reach else (), reach, documented,
                     c.get(m, "assumption", where, str), c.get(m, "why", where, str),
                     cite(m.get("source", ())), None, c.get(m, "timing_assumption", where, str),
                     timing == "port")


def _remap(c: _Checker, r: dict, k: int, cite) -> Remap:
    where = f"remap[{k}]."
    c.unknown_keys(r, {"name", "origin", "length", "mask", "target", "source"}, where)
    return Remap(c.get(r, "name", where, str, default=f"remap {k}"), c.get(r, "origin", where, int, required=True),
                 c.get(r, "length", where, int, required=True), c.get(r, "mask", where, int, default=0xFFFFFFFF),
                 c.get(r, "target", where, int, required=True), cite(r.get("source", ())))


def from_toml(path: str | Path) -> Soc:
    """A user's SoC file: one preset, either at the top level or as the file's only table."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(path, f"cannot read SoC file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(path, f"not a TOML SoC description: {exc}") from None
    name = path.stem
    if "memories" not in data:
        tables = [k for k, v in data.items() if isinstance(v, dict)]
        if len(tables) != 1:
            raise InputError(path, "memories: missing (a SoC file holds one preset: its keys at the top "
                                   "level, or one [NAME] table, in the schema of npu/data/soc.toml)")
        name, data = tables[0], data[tables[0]]
        return build(name, data, path, preset=name, origin=str(path))
    return build(name, data, path, origin=str(path))


@functools.lru_cache(maxsize=None)
def _presets() -> dict:
    return tomllib.loads(SOC_TOML.read_text())


def soc_names() -> list[str]:
    return list(_presets())


@functools.lru_cache(maxsize=None)
def load_soc(name: str) -> Soc:
    """A preset of npu/data/soc.toml by name, or a file: a TOML in that schema (a user's own SoC)
    or a Zephyr build's devicetree (`build/zephyr/zephyr.dts`)."""
    table = _presets()
    if name in table:
        return build(name, table[name], SOC_TOML, preset=name)
    if name.endswith(".dts"):
        return from_dts(name)
    if name.endswith(".toml") or "/" in name:
        return from_toml(name)
    raise InputError(None, f"unknown SoC preset {name!r} (known: {', '.join(table)}; or give a "
                           f"FILE.toml in the schema of npu/data/soc.toml, or a Zephyr build's zephyr.dts)")


def default_soc(acc: Accelerator) -> str:
    return "corstone-320" if acc.is_u85 else "corstone-300"


def board_for(acc: Accelerator, name: str | None) -> Soc:
    """The SoC preset `name` (default: the accelerator's Corstone), refused in one line when it
    cannot carry this accelerator: no Arm subsystem pairs an Ethos-U85 with the SSE-300, nor an
    Ethos-U55/U65 with the SSE-320."""
    board = load_soc(name or default_soc(acc))
    if not board.ports:                  # a file that leaves them out: the accelerator's own
        board = _with_ports(board, acc.ports)
    if acc.family not in board.npus:
        raise InputError(None, f"SoC preset {board.name} carries {' or '.join(board.npus)}, not "
                               f"{acc.name}: give --soc {default_soc(acc)} (or another preset "
                               f"with an {acc.family})")
    return board


def _with_ports(board: Soc, ports: tuple[str, ...]) -> Soc:
    """A SoC file without `ports` names them AXI0/AXI1 (REGIONCFG order): the accelerator's."""
    rename = dict(zip(("AXI0", "AXI1"), ports))
    fix = lambda m: replace(m, ports=tuple(rename.get(p, p) for p in m.ports),  # noqa: E731
                            documented=tuple(rename.get(p, p) for p in m.documented))
    rule = board.port_rule and replace(board.port_rule, port=rename.get(board.port_rule.port, board.port_rule.port))
    return replace(board, ports=ports, memories=tuple(map(fix, board.memories)),
                   aliases=tuple(map(fix, board.aliases)), port_rule=rule)


# A memory of these kinds is read-only to the image: no stub is written there.
ROM_KINDS = ("Rom", "OnChipFlash", "OffChipFlash")


@functools.lru_cache(maxsize=None)
def _machines() -> dict:
    return tomllib.loads(QEMU_TOML.read_text())


@functools.lru_cache(maxsize=None)
def qemu_board(soc: str, fallback: str) -> QemuBoard:
    """The QEMU board an image built for preset `soc` boots on: the machine that is that preset,
    or one that runs its images at their own addresses (npu/data/qemu.toml). A SoC no machine
    runs (a hypothetical preset such as `shared-bus`, a file) runs as preset `fallback`, its
    accelerator's Corstone."""
    for preset in (soc, fallback):
        for machine, m in _machines().items():
            if preset == m["models"] or preset in m["runs"]:
                return _board(machine, m, load_soc(preset))
    raise InputError(QEMU_TOML, f"no machine runs {soc} or {fallback}")


def _board(machine: str, m: dict, soc: Soc) -> QemuBoard:
    """The machine's own memory for the preset it models; for another preset, its memories that
    lie in the machine's memory at the same address (the others are what the board lacks)."""
    own = tuple(QemuMemory(x["name"], x["origin"], x["length"], x.get("rom", False),
                           m["secure_alias"] if x.get("alias") else 0) for x in m["memories"])
    name, memories, lacks = machine, own, ""
    if soc.name != m["models"]:
        fits = [any(o.contains(x.origin, x.length) for o in own) for x in soc.memories]
        memories = tuple(QemuMemory(x.name, x.origin, x.length, x.kind in ROM_KINDS)
                         for x, fit in zip(soc.memories, fits) if fit)
        missing = [f"{x.name} 0x{x.origin:08x}+{x.length >> 10} KiB"
                   for x, fit in zip(soc.memories, fits) if not fit]
        name = m["runs"][soc.name]
        lacks = f"{', '.join(missing)}, which QEMU does not map" if missing else ""
    return QemuBoard(name, machine, memories, soc.vectors or m["reset_vectors"], soc.npu_base,
                     soc.npu_irq, soc.name, m["reset_vectors"], m["nvic_ispr"], m["vtor"], lacks)
