"""ld's built-in linker script, used when no -T is given (ld.info "-T": the script replaces
the default one). `arm-none-eabi-ld --verbose [-m EMULATION]` prints it between two lines of
'=' signs. It is read once per toolchain and kept in the cache directory, keyed by the ld path,
its version line and the emulation. For newlib links it is what defines `end`,
`__bss_start__`, `__bss_end__` (docs/linker-semantics.md §5)."""
from __future__ import annotations

import functools
import json
import os
import subprocess
import zlib
from pathlib import Path

from weaklink import toolchain
from weaklink.cachedir import cache_dir
from weaklink.errors import InputError
from weaklink.read import ldscript
from weaklink.resolve.script import ScriptSymbols, parse_script

_RULE = "=" * 50


def _cache_dir() -> Path:
    return cache_dir() / "ldscripts"


def _extract(text: str) -> str:
    parts = text.split(_RULE)
    if len(parts) < 3:
        raise InputError("ld --verbose", f"expected the built-in script between two '{_RULE[:5]}…' lines")
    return parts[1].strip("\n") + "\n"


def _key(ld: str, emulation: str | None) -> str:
    """The ld binary (path and identity: a new version is a new file) and the emulation; the
    version line itself is recorded in the cached script's first line."""
    st = os.stat(os.path.realpath(ld))
    ident = f"{ld}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0{emulation or ''}"
    # a checksum, not a digest: it names a cache file (hashlib's import costs 3 ms)
    return f"{zlib.crc32(ident.encode()):08x}-{st.st_size:x}"


@functools.lru_cache(maxsize=8)
def default_script(emulation: str | None = None):
    """ld's default script for `emulation`, parsed (resolve/script.py ScriptSymbols); the
    parse is cached next to the text."""
    ld = toolchain.tool("ld")
    shape = "tuples:" + ",".join(f for cls in (ScriptSymbols, ldscript.Assignment,
                                                ldscript.InputSectionRule,
                                                ldscript.SectionPattern, ldscript.InputFile)
                                 for f in cls._fields)
    version = f"{zlib.crc32(shape.encode()):08x}"          # the parsed records' layout
    parsed = _cache_dir() / f"{_key(ld, emulation)}-{version}.json"
    if parsed.exists():
        try:
            return _from_json(json.loads(parsed.read_text()))
        except (ValueError, TypeError, IndexError):    # a stale or foreign file: parse again
            pass
    text, name = default_script_text(emulation)
    sc = parse_script(text, name)
    tmp = parsed.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(sc))                     # the records as JSON arrays
    os.replace(tmp, parsed)
    return sc


def _from_json(d: list) -> ScriptSymbols:
    """The ScriptSymbols json.dumps wrote as nested arrays, with its tuples and records."""
    name, entry, extern, provide, assigned, values, inputs, rules, dirs, aliases = d
    return ScriptSymbols(
        name, entry, tuple(extern), tuple(provide), tuple(assigned), values,
        tuple(ldscript.InputFile(*f) for f in inputs),
        tuple(ldscript.InputSectionRule(file, tuple(excluded),
                                        tuple(ldscript.SectionPattern(p, tuple(x))
                                              for p, x in sections), keep, output)
              for file, excluded, sections, keep, output in rules),
        tuple(dirs), aliases)


@functools.lru_cache(maxsize=8)
def default_script_text(emulation: str | None = None) -> tuple[str, str]:
    """(script text, display name) of ld's default script for `emulation` (None: ld's own)."""
    ld = toolchain.tool("ld")
    name = f"<ld --verbose{' -m ' + emulation if emulation else ''}>"
    path = _cache_dir() / f"{_key(ld, emulation)}.x"
    if path.exists():
        return path.read_text(), name
    version = subprocess.run([ld, "--version"], capture_output=True, text=True).stdout
    version = version.splitlines()[0] if version else "?"
    argv = [ld, "--verbose", *(["-m", emulation] if emulation else [])]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode:
        raise InputError(name, (proc.stderr.strip().splitlines() or ["ld --verbose failed"])[-1])
    text = f"/* {version} */\n" + _extract(proc.stdout)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return text, name
