"""Binding files: which symbols and sections feed which NPU base-address region.

Validated on load; every error names the file and the key. Region sources:
- `model-weights`: the weight_data block of the embedded vela_bin_stream blob;
- `symbol`: the address and size of the first of `symbols` defined in the image (or, with a
  map file, of `input_section`);
- `pointer`: the initial value of the first of `symbols` (a pointer variable), with the size in
  the matching entry of `size_symbols`; `reader` is a glob naming the translation unit that
  reads the pointer.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from weaklink.errors import InputError, read_input

PRESETS = Path(__file__).resolve().parent.parent / "data" / "bindings"
SOURCES = ("model-weights", "symbol", "pointer")
MAX_REGIONS = 8  # NPU BASEP registers


@dataclass(frozen=True)
class RegionRule:
    index: int
    name: str
    source: str
    symbols: tuple[str, ...] = ()
    size_symbols: tuple[str, ...] = ()
    input_section: str | None = None
    reader: str | None = None


@dataclass(frozen=True)
class Binding:
    name: str
    path: str
    model_symbol: str | None
    regions: tuple[RegionRule, ...]

    def region(self, index: int) -> RegionRule | None:
        return next((r for r in self.regions if r.index == index), None)


def presets() -> list[str]:
    return sorted(p.stem for p in PRESETS.glob("*.toml"))


def load_binding(name_or_path: str | Path) -> Binding:
    """A preset by name (`executorch-arm`) or a binding file by path."""
    path = Path(name_or_path)
    if not path.suffix and (PRESETS / f"{name_or_path}.toml").exists():
        path = PRESETS / f"{name_or_path}.toml"
    if not path.exists():
        raise InputError(path, f"no such binding file or preset (presets: {', '.join(presets())})")
    try:
        data = tomllib.loads(read_input(path, text=True, what="binding file"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"not valid TOML: {exc}") from None
    return _parse(data, str(path))


def _strings(value, path, key) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(path, f"{key}: expected a string or a list of strings")
    return tuple(value)


def _rule(entry: dict, path: str, n: int) -> RegionRule:
    key = f"region[{n}]"
    if not isinstance(entry, dict):
        raise InputError(path, f"{key}: expected a [[region]] table")
    for name in ("input_section", "reader"):
        if not isinstance(entry.get(name, ""), str):
            raise InputError(path, f"{key}.{name}: expected a string")
    index = entry.get("index")
    if not isinstance(index, int) or not 0 <= index < MAX_REGIONS:
        raise InputError(path, f"{key}.index: expected an integer 0..{MAX_REGIONS - 1}")
    source = entry.get("source")
    if source not in SOURCES:
        raise InputError(path, f"{key}.source: expected one of {', '.join(SOURCES)}, got {source!r}")
    rule = RegionRule(index, str(entry.get("name", f"region {index}")), source,
                      _strings(entry.get("symbols"), path, f"{key}.symbols"),
                      _strings(entry.get("size_symbols"), path, f"{key}.size_symbols"),
                      entry.get("input_section"), entry.get("reader"))
    if source in ("symbol", "pointer") and not rule.symbols and not rule.input_section:
        raise InputError(path, f"{key}: source {source!r} needs `symbols`")
    if source == "pointer" and rule.size_symbols and len(rule.size_symbols) != len(rule.symbols):
        raise InputError(path, f"{key}.size_symbols: expected one size symbol per pointer symbol")
    return rule


def _parse(data: dict, path: str) -> Binding:
    if data.get("schema_version") != 1:
        raise InputError(path, f"schema_version: expected 1, got {data.get('schema_version')!r}")
    entries = data.get("region")
    if not isinstance(entries, list) or not entries:
        raise InputError(path, "region: expected at least one [[region]] table")
    rules = tuple(_rule(e, path, n) for n, e in enumerate(entries))
    seen = [r.index for r in rules]
    if len(set(seen)) != len(seen):
        raise InputError(path, f"region: index listed twice ({sorted(seen)})")
    model = data.get("model", {})
    if not isinstance(model, dict) or not isinstance(model.get("symbol", ""), str):
        raise InputError(path, "model: expected a table with a string `symbol`")
    return Binding(str(data.get("name", Path(path).stem)), path, model.get("symbol"),
                   tuple(sorted(rules, key=lambda r: r.index)))
