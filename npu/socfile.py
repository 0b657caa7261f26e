"""A SoC description read from data: a preset of ``npu/data/soc.toml``, or a user's own TOML file
in the same schema (docs/npu.md, "Your own SoC"). Every key is checked; a bad one is one line
naming the file and the key (`memories[2].origin: expected an integer`)."""
from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

from npu.errors import InputError
from npu.soc import PortRule, Remap, Soc, SocMemory

FAMILIES = ("ethos-u55", "ethos-u65", "ethos-u85")
KINDS = ("Sram", "Dram", "OnChipFlash", "OffChipFlash", "Tcm", "Bram", "Rom")
PRESET_KEYS = {"name", "npus", "npus_source", "ports", "areas", "areas_source", "unmapped", "sources",
               "memories", "aliases", "npu_base", "npu_base_source", "accelerators", "remap",
               "port_rule", "assumptions"}
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
               tuple(c.get(s, "assumptions", "", list, default=[])))


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
