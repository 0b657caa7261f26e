"""The COP1 driver payload (docs/npu.md §4): what ``ethosu_invoke_v3`` is handed.

Little-endian 32-bit words: the FOURCC ``COP1``, then driver actions. Each action word is
``id:8 | reserved:8 | data:16``. OPTIMIZER_CONFIG (1) is followed by the ``config_r`` and
``id_r`` words Vela compiled for; NOP (5) pads the stream to 16 bytes; COMMAND_STREAM (2)
carries the stream length in words as ``reserved << 16 | data`` and is followed by the
register command stream. DUMP_SHRAM (3) and DUMP_REG (4) take no payload.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from npu.errors import InputError

MAGIC = 0x31504F43                    # 'C' | 'O'<<8 | 'P'<<16 | '1'<<24
OPTIMIZER_CONFIG, COMMAND_STREAM, DUMP_SHRAM, DUMP_REG, NOP = 1, 2, 3, 4, 5


@dataclass(frozen=True)
class Cop1Payload:
    data: bytes                       # the whole payload
    config_word: int | None           # OPTIMIZER_CONFIG: config_r as compiled for
    id_word: int | None               # OPTIMIZER_CONFIG: id_r as compiled for
    stream_offset: int                # byte offset of the register command stream in `data`
    stream: bytes                     # the register command stream

    @property
    def product(self) -> int | None:
        return None if self.config_word is None else self.config_word >> 28


def parse_cop1(data: bytes, path=None) -> Cop1Payload:
    """Parse a COP1 payload with the checks the driver's ``handle_optimizer_config`` and
    ``ethosu_invoke_async`` loop make; every failure is an InputError with its offset."""
    if len(data) < 4:
        raise InputError(path, f"COP1 payload is {len(data)} bytes, shorter than its magic", 0)
    (magic,) = struct.unpack_from("<I", data)
    if magic != MAGIC:
        raise InputError(path, f"bad magic 0x{magic:08x}, expected 'COP1' (0x{MAGIC:08x})", 0)
    if len(data) % 4:
        raise InputError(path, f"COP1 payload size {len(data)} is not a multiple of 4", len(data))
    pos, config_word, id_word = 4, None, None
    while pos < len(data):
        (word,) = struct.unpack_from("<I", data, pos)
        action, reserved, value = word & 0xFF, (word >> 8) & 0xFF, word >> 16
        if action == OPTIMIZER_CONFIG:
            if pos + 12 > len(data):
                raise InputError(path, "truncated payload: OPTIMIZER_CONFIG without its two words", pos)
            config_word, id_word = struct.unpack_from("<II", data, pos + 4)
            pos += 12
        elif action in (NOP, DUMP_SHRAM, DUMP_REG):
            pos += 4
        elif action == COMMAND_STREAM:
            words = (reserved << 16) | value
            start, end = pos + 4, pos + 4 + 4 * words
            if end > len(data):
                raise InputError(path, f"truncated payload: command stream of {words} words needs "
                                       f"{end} bytes, payload has {len(data)}", pos)
            return Cop1Payload(bytes(data), config_word, id_word, start, bytes(data[start:end]))
        else:
            raise InputError(path, f"unknown driver action {action} in COP1 payload", pos)
    raise InputError(path, "COP1 payload has no COMMAND_STREAM action", pos)
