"""Binding files: which symbols and sections feed which NPU base-address region.

Validated on load; every error names the file and the key. Region sources:
- `model-weights`: the weight_data block of the embedded vela_bin_stream blob;
- `symbol`: the address and size of the first of `symbols` defined in the image (or, with a
  map file, of `input_section`);
- `pointer`: the initial value of the first of `symbols` (a pointer variable), with the size in
  the matching entry of `size_symbols`; `reader` is a glob naming the translation unit that
  reads the pointer;
- `tflite-tensor`: entry `index` of an `ethos-u` operator's base-address table (TFLM): a tensor
  with data in the embedded flatbuffer (the weights), else a tensor TFLM's planner places in
  the tensor arena.

Optional tables: `[model] format` ("vela_bin_stream" or "tflite"), `[arena]` (where the tensor
arena is: `symbols`, `input_section`, `symbol_suffix`; read from the code before these, see
weaklink.bind.tflm), `[fast_memory]` (what `callee`, the
driver's init, receives: `symbols`/`size_symbols` name it, else it is read from the image).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from weaklink.errors import InputError, read_input

PRESETS = Path(__file__).resolve().parent.parent / "data" / "bindings"
SOURCES = ("model-weights", "symbol", "pointer", "tflite-tensor")
FORMATS = ("vela_bin_stream", "tflite")
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
    # `size = "model-scratch"`: the backend passes the blob's scratch_size as this region's
    # size (its first allocation from the symbol's pool), not the pool's own size
    size: str | None = None


SIZES = ("model-scratch",)


@dataclass(frozen=True)
class ArenaRule:
    """Where TFLM's tensor arena is: a named symbol; else, when the code does not show it, an
    input section (needs the map) or the largest object whose demangled name has
    `symbol_suffix` in its last component (weaklink.bind.tflm)."""
    symbols: tuple[str, ...] = ()
    input_section: str | None = ".bss.tensor_arena"
    symbol_suffix: str | None = "arena"


@dataclass(frozen=True)
class FastMemoryRule:
    """The fast memory the driver is initialised with: `callee(drv, base, fast, fast_size, …)`."""
    callee: str = "ethosu_init"
    symbols: tuple[str, ...] = ()
    size_symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class Binding:
    name: str
    path: str
    model_symbol: str | None
    regions: tuple[RegionRule, ...]
    model_format: str = "vela_bin_stream"
    arena: ArenaRule | None = None
    fast_memory: FastMemoryRule | None = None

    def region(self, index: int) -> RegionRule | None:
        return next((r for r in self.regions if r.index == index), None)


def presets() -> list[str]:
    return sorted(p.stem for p in PRESETS.glob("*.toml"))


def pointer_symbols(binding: Binding | None) -> list[str]:
    """The symbols the pointer rules of `binding` read; with no binding yet (it is detected
    from the image), those of every preset."""
    bindings = [binding] if binding else [load_binding(name) for name in presets()]
    return list(dict.fromkeys(n for b in bindings for r in b.regions if r.source == "pointer"
                              for n in r.symbols))


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
    for name in ("input_section", "reader", "size"):
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
                      entry.get("input_section"), entry.get("reader"), entry.get("size"))
    if rule.size is not None and (rule.size not in SIZES or source != "symbol"):
        raise InputError(path, f"{key}.size: expected one of {', '.join(SIZES)} on a symbol region")
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
    for key in ("model", "arena", "fast_memory"):
        if key in data and not isinstance(data[key], dict):
            raise InputError(path, f"{key}: expected a table ([{key}])")
    model = data.get("model", {})
    if not isinstance(model.get("symbol", ""), str):
        raise InputError(path, "model.symbol: expected a string")
    fmt = model.get("format", "vela_bin_stream")
    if fmt not in FORMATS:
        raise InputError(path, f"model.format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    arena = data.get("arena")
    if arena is not None:
        arena = ArenaRule(_strings(arena.get("symbols"), path, "arena.symbols"),
                          arena.get("input_section"), arena.get("symbol_suffix"))
    fast = data.get("fast_memory")
    if fast is not None:
        fast = FastMemoryRule(str(fast.get("callee", "ethosu_init")),
                              _strings(fast.get("symbols"), path, "fast_memory.symbols"),
                              _strings(fast.get("size_symbols"), path, "fast_memory.size_symbols"))
    return Binding(str(data.get("name", Path(path).stem)), path, model.get("symbol"),
                   tuple(sorted(rules, key=lambda r: r.index)), fmt, arena, fast)
