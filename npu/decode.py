"""Decode an Ethos-U register command stream into Vela's command names and fields.

Each command is one 32-bit word ``opcode:10 | reserved:4 | control:2 | param:16``; control
0 (cmd0) stands alone, control 1 (cmd1) is followed by a 32-bit payload word. The opcode
numbers, bit fields and display formats come from Vela's C++ interface headers, carried
over as data (``npu/data/ethos_u{65,85}_commands.toml``; U55 streams use the U65 table, as
Vela's U55 generator does). On U85 the address commands hold a 40-bit address:
``addr_hi:8`` in the parameter and ``addr_lo:32`` in the payload.
"""
from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass

import numpy as np

from npu.errors import InputError
from npu.hw import DATA
from npu.records import Record

CMD0, CMD1 = 0, 1
MAX_REGION = 7


@dataclass(frozen=True)
class Command(Record):
    offset: int               # bytes from the first register command, as in Vela's listing
    command: str              # Vela's name, e.g. NPU_SET_IFM_REGION
    param: int                # bits 31:16 of the command word
    code: int                 # bits 15:0 (opcode and control), Vela's "Code" column
    payload: int | None       # the second word of a cmd1
    fields: dict              # field name -> int, or the enum's name

    JSON = ("offset", "command", "param", "payload", "fields")

    def listing(self) -> str:
        """One line in the layout of Vela's ``--verbose-register-command-stream``."""
        payload = f"{self.payload:08x}" if self.payload is not None else " " * 8
        shown = ", ".join(f"{k} = {hex(v) if k == 'addr' else v}" for k, v in self.fields.items())
        head = f"0x{self.offset:06x}: {payload} {self.param:04x} {self.code:04x} - {self.command:<30}{self.param:6d}"
        return f"{head}, {shown}" if shown else head


@dataclass(frozen=True)
class _Spec:
    name: str
    kind: int
    bits: tuple[tuple[str, int, int], ...]
    show: tuple[tuple[str, str], ...]


class CommandTable:
    """One architecture's opcodes, field layouts and enum names."""

    def __init__(self, data: dict):
        self.enums = data["enums"]
        self.by_code: dict[int, _Spec] = {}
        self.opcode: dict[str, int] = {}
        for kind_name, kind in (("cmd0", CMD0), ("cmd1", CMD1)):
            for name, opcode in data[kind_name].items():
                cmd = data["commands"][name]
                spec = _Spec(name, kind, tuple(map(tuple, cmd["bits"])), tuple(map(tuple, cmd["show"])))
                self.by_code[(kind << 14) | opcode] = spec
                self.opcode[name] = opcode

    def fields(self, spec: _Spec, word: int) -> dict:
        raw = {name: (word >> lsb) & ((1 << width) - 1) for name, lsb, width in spec.bits}
        if "addr_lo" in raw:
            raw["addr"] = (raw.pop("addr_hi", 0) << 32) | raw.pop("addr_lo")
        out = {}
        for name, fmt in spec.show:
            value = raw.get(name, 0)
            if fmt.startswith("enum:"):
                names = self.enums[fmt[5:]]
                value = names[value] if value < len(names) else "****"
            out[name] = value
        return out


@functools.lru_cache(maxsize=None)
def command_table(filename: str) -> CommandTable:
    return CommandTable(tomllib.loads((DATA / filename).read_text()))


def decode_stream(stream: bytes, table: CommandTable, path=None) -> list[Command]:
    """Decode every command up to and including NPU_OP_STOP.

    Raises InputError (offset counted in the stream, as in Vela's listing) for an unknown
    opcode, a region above 7, a cmd1 whose payload is cut off, or a stream without STOP.
    """
    if len(stream) % 4:
        raise InputError(path, f"command stream of {len(stream)} bytes is not whole words", len(stream))
    words = np.frombuffer(stream, dtype="<u4").tolist()
    out, i, n = [], 0, len(words)
    by_code = table.by_code
    while i < n:
        word, offset = words[i], 4 * i
        code = word & 0xFFFF
        spec = by_code.get(code & 0xC3FF)
        if spec is None or code & 0x3C00:
            raise InputError(path, f"unknown opcode 0x{word & 0x3FF:03x} (control {(word >> 14) & 3}) "
                                   f"in command word 0x{word:08x}", offset)
        payload = None
        if spec.kind == CMD1:
            if i + 1 >= n:
                raise InputError(path, f"truncated payload: {spec.name} has no payload word", offset)
            payload = words[i + 1]
            word |= payload << 32
        param = (word >> 16) & 0xFFFF
        if spec.name.endswith("_REGION") and (param & 0xFF) > MAX_REGION:
            raise InputError(path, f"{spec.name} selects region {param & 0xFF}, above {MAX_REGION}", offset)
        out.append(Command(offset, spec.name, param, code, payload, table.fields(spec, word)))
        i += 2 if payload is not None else 1
        if spec.name == "NPU_OP_STOP":
            return out
    raise InputError(path, "command stream ends without NPU_OP_STOP", 4 * n)
