"""Resolve a binding against a linked image: the base-address table the backend will pass.

Each BoundBase keeps its provenance (which symbol, which binding, which file defined it), so the
emulator's verdict can be explained back to the link: "region 2 base 0x0 ← ethosu_fast_scratch =
WEAK default from EthosUBackend.o".
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from npu.read.blob import BLOCK_HEAD, FOOTER, HEADER, VelaBlob, read_blob
from weaklink.bind.binding import Binding, RegionRule
from weaklink.bind.fastmem import FAST_MEMORY_INDEX
from weaklink.bind.evidence import ReaderEvidence, ReadEvidence
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image

@dataclass(frozen=True)
class SymbolFact:
    name: str
    address: int
    size: int
    binding: str          # "global" | "weak"
    section: str | None
    defined_in: str | None = None


@dataclass(frozen=True)
class BoundBase:
    """One entry of the table: BASEP[region] = address, with the size the backend passes."""

    region: int
    name: str
    address: int
    size: int
    symbol: SymbolFact | None = None     # the symbol the address came from
    size_symbol: SymbolFact | None = None
    note: str = ""                       # how the entry was derived, for the diagnosis chain
    arena: tuple[int, int] | None = None  # [start, end) of the arena the planner places it in
    offset: int | None = None             # its offset there, from the offline plan (None: run time)
    # pointer rules: whether the reader reads the symbol, and which evidence says so
    evidence: ReadEvidence | None = field(default=None, compare=False)
    # why the image does not say this base (then `address` means nothing and is 0), and the
    # option that supplies it
    unknown: str = ""
    run_time: bool = False                # in an arena the code computes at run time


@dataclass(frozen=True)
class BaseAddressTable:
    binding: str
    model_address: int            # where the vela_bin_stream blob sits in the image (0: none)
    model: VelaBlob | None
    bases: tuple[BoundBase, ...]
    model_bytes: bytes = b""      # the blob as embedded
    stream_address: int = 0       # the COP1 command stream handed to the driver
    model_format: str = "vela_bin_stream"   # or "tflite"
    model_symbol: str | None = None
    operator: int | None = None   # the ethos-u operator of a tflite (0-based, model order)
    arena: object = None          # bind.tflm.Arena
    fast_memory: object = None    # bind.fastmem.FastMemory
    # a TFLM image that holds no model to check: why (where the code reads it from, when it
    # shows that), and the option that supplies it; the table has no bases then
    missing: str | None = None

    def base(self, region: int) -> BoundBase | None:
        return next((b for b in self.bases if b.region == region), None)


def symbol_fact(image: Image, name: str, *, local: bool = False) -> SymbolFact | None:
    """The defined global (or weak) symbol `name` as the table reports it; with `local`, a
    file-local one as a fallback (a `static` arena or buffer)."""
    sym = image.symbol_named(name, local=local)
    if sym is None:
        return None
    return SymbolFact(name, sym.address, sym.size, S.BINDING_NAMES.get(sym.binding, "local"),
                      image.section_name(sym.shndx))


def reset_word(image: Image, fact: SymbolFact) -> int | None:
    """The reset value of a pointer- or size-like variable."""
    sym = image.symbol_named(fact.name, local=fact.binding == "local")
    return image.initial_value(sym) if sym is not None else None


def _blob_at(image: Image, address: int, limit: int) -> tuple[bytes, dict[str, int]]:
    """The blob bytes starting at `address` and the offset of each block's payload. The
    blocks are walked header by header and only the blob's own bytes are read: the section
    holding it may be a DDR pool of 100 MB."""
    i = image.section_at(address)
    avail = 0
    if i is not None:
        sh = image.elf.shdrs[i]
        off = address - sh.sh_addr
        avail = min(limit, sh.sh_size - off)
    pos, payload = 0, {}
    while pos + BLOCK_HEAD.size <= avail:
        raw, size = BLOCK_HEAD.unpack(image.elf.section_bytes(i, off + pos, BLOCK_HEAD.size))
        name = raw.split(b"\0", 1)[0].decode("ascii", "replace")
        payload[name] = pos + BLOCK_HEAD.size
        pos += BLOCK_HEAD.size + ((size + 15) & ~15)
        if name == FOOTER:
            return image.elf.section_bytes(i, off, min(pos, avail)), payload
    raise InputError(image.elf.name, "vela_bin_stream blob has no vela_end_stream footer", address)


def _looks_like_blob(data: bytes) -> bool:
    """An empty header block followed by cmd_data, not just the name as a string literal."""
    if 2 * BLOCK_HEAD.size > len(data):
        return False
    _, size = BLOCK_HEAD.unpack_from(data, 0)
    name, _ = BLOCK_HEAD.unpack_from(data, BLOCK_HEAD.size)
    return size == 0 and name.rstrip(b"\0") == b"cmd_data"


def find_model(image: Image, binding: Binding) -> tuple[int, bytes, dict[str, int]]:
    """(address, blob bytes, payload offset per block) of the embedded vela_bin_stream blob."""
    marker = HEADER.encode().ljust(16, b"\0")
    fact = image.symbol_named(binding.model_symbol) if binding.model_symbol else None
    if fact is not None:
        candidates = [fact.address]
    else:  # the first in a loadable PROGBITS section, 16-byte aligned as vela_bin_read wants
        data = image.elf.data
        scan = (address for at, address, end in image.find_loaded(marker) if address % 16 == 0
                and _looks_like_blob(data[at:min(at + 2 * BLOCK_HEAD.size, end)]))
        candidates = list(itertools.islice(scan, 1))
    for address in candidates:
        head = image.bytes_at(address, 2 * BLOCK_HEAD.size) or b""
        if head[:16] == marker and _looks_like_blob(head):
            limit = fact.size if fact and fact.size else 1 << 26
            data, payload = _blob_at(image, address, limit)
            return address, data, payload
    raise InputError(image.elf.name, "no vela_bin_stream model blob found in the image "
                     "(give the model with --model)")


def _pointer_base(image: Image, rule: RegionRule, refs: ReaderEvidence | None) -> BoundBase:
    sizes = rule.size_symbols or (None,) * len(rule.symbols)
    for name, size_name in zip(rule.symbols, sizes):
        fact = symbol_fact(image, name)
        if fact is None:
            continue
        evidence = refs(name, rule.reader) if refs is not None and rule.reader else None
        if evidence is not None and evidence.reads is False:
            return BoundBase(rule.index, rule.name, 0, 0, None, None,
                             f"`{name}` is linked but no {rule.reader} unit reads it: the "
                             f"backend passes 0/0 ({evidence.detail})", evidence=evidence)
        size_fact = symbol_fact(image, size_name) if size_name else None
        value = reset_word(image, fact) or 0
        size = (reset_word(image, size_fact) or 0) if size_fact else 0
        kind = "WEAK default" if fact.binding == "weak" else "strong definition"
        return BoundBase(rule.index, rule.name, value, size, fact, size_fact,
                         f"`{name}` = {value:#x} ({kind})", evidence=evidence)
    return BoundBase(rule.index, rule.name, 0, 0, None, None,
                     f"none of {', '.join(rule.symbols)} is defined: the backend passes 0/0")


def _symbol_base(image: Image, rule: RegionRule, blob: VelaBlob | None = None) -> BoundBase:
    for name in rule.symbols:
        fact = symbol_fact(image, name)
        if fact is None:
            continue
        if rule.size == "model-scratch" and blob is not None:
            # ExecuTorch's backend allocates the blob's scratch_size from the pool (its first
            # allocation: the pool's start) and passes that size, not the pool's
            return BoundBase(rule.index, rule.name, fact.address, blob.scratch_size, fact, None,
                             f"`{name}` at {fact.address:#x}: the model's scratch, "
                             f"{blob.scratch_size} of its {fact.size} bytes")
        return BoundBase(rule.index, rule.name, fact.address, fact.size, fact, None,
                         f"`{name}` at {fact.address:#x}, {fact.size} bytes")
    raise InputError(image.elf.name, f"region {rule.index} ({rule.name}): none of the symbols "
                     f"{', '.join(rule.symbols)} is defined in the image")


def resolve_bases(image: Image, binding: Binding, references: ReaderEvidence | None = None,
                  *, require_model: bool = True) -> BaseAddressTable:
    """Compute the base-address table. `references` (weaklink.bind.evidence) lets a pointer
    rule tell a symbol the backend reads from one it never reads. With `require_model=False`
    (the model comes from elsewhere) an image without an embedded blob gets region 0 = 0, said
    in its note."""
    elf = image.elf
    try:
        address, raw, payload = find_model(image, binding)
    except InputError:
        if require_model:
            raise
        address, raw, payload = 0, b"", {}
    blob = read_blob(raw, f"{elf.name}@{address:#x}") if raw else None
    bases = []
    for rule in binding.regions:
        if rule.source == "model-weights":
            bases.append(_weights_base(rule, address, payload, blob))
        elif rule.source == "symbol":
            bases.append(_symbol_base(image, rule, blob))
        else:
            bases.append(_pointer_base(image, rule, references))
    return BaseAddressTable(binding.name, address, blob, tuple(bases), raw,
                            address + payload.get("cmd_data", 0) if raw else 0)


def apply_fast_memory(table: BaseAddressTable, fact: SymbolFact | None = None) -> BaseAddressTable:
    """ethosu_invoke_v3: a non-zero fast memory replaces base_addr[2] when there are more than
    2 entries; the size stays the table's (the driver compares it with the fast memory's)."""
    fast = table.fast_memory
    old = table.base(FAST_MEMORY_INDEX)
    if fast is None or old is None or len(table.bases) <= FAST_MEMORY_INDEX:
        return table
    if fast.unknown:                 # the driver may replace it with a value the image hides
        new = replace(old, note=f"{old.note}; unless ethosu_init's fast memory, which cannot be "
                                "read, replaces it")
    elif fast.given:
        new = replace(old, address=fast.address, symbol=fact, size_symbol=None, arena=None, offset=None,
                      note=f"ethosu_init's fast memory replaces it: {fast.note}", unknown="")
    else:
        return table
    return replace(table, bases=tuple(new if b is old else b for b in table.bases))


def _weights_base(rule: RegionRule, address: int, payload: dict, blob) -> BoundBase:
    if blob is None:
        return BoundBase(rule.index, rule.name, 0, 0, None, None,
                         "no vela_bin_stream blob in the image: the weights' address is unknown")
    return BoundBase(rule.index, rule.name, address + payload["weight_data"],
                     len(blob.weight_data), None, None,
                     f"weight_data of the model blob at {address:#x}")
