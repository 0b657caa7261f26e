"""What ``ethosu_invoke_v3`` checks before it starts the NPU (docs/npu.md §5).

Checks that fail the invocation (the driver returns -1): the COP1 magic, a payload size
that is not a multiple of 4, the optimizer config against the hardware CONFIG/ID
registers, a command stream not 16-byte aligned, any base address not 16-byte aligned, more
than 8 base addresses, and fast memory too small (only when ``ethosu_init`` was given fast
memory). What passes silently: a base of 0, a size of 0, sizes that do not match what the
stream addresses (the driver never compares them).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from npu.hw import Accelerator
from npu.read.cop1 import MAGIC

MAX_BASES = 8                     # NPU_REG_BASEP_ARRLEN
FAST_MEMORY_BASE_ADDR_INDEX = 2
ALIGN = 16


@dataclass(frozen=True)
class Base:
    """One entry of ``base_addr``/``base_addr_size``: region i's BASEP and its size (0 = not given)."""
    region: int
    address: int
    size: int = 0


@dataclass(frozen=True)
class DriverResult:
    ok: bool
    reason: str | None
    bases: tuple[Base, ...]       # after fast-memory substitution


def _config_mismatch(stream_config: int, stream_id: int, acc: Accelerator) -> str | None:
    """ethosu_dev_verify_optimizer_config: config fields equal, arch major equal, minor not newer."""
    if stream_config != acc.config_word:
        return (f"optimizer config 0x{stream_config:08x} (product {stream_config >> 28}, "
                f"macs_per_cc {1 << (stream_config & 0xF)}) does not match the {acc.name} "
                f"CONFIG register 0x{acc.config_word:08x}")
    major, minor = stream_id >> 28, (stream_id >> 20) & 0xFF
    hw_major, hw_minor = acc.id_word >> 28, (acc.id_word >> 20) & 0xFF
    if major != hw_major or minor > hw_minor:
        return f"optimizer arch version {major}.{minor} does not match the {acc.name} ID {hw_major}.{hw_minor}"
    return None


def invoke_checks(payload: bytes, bases: list[Base], acc: Accelerator, *, stream_address: int = 0,
                  fast_memory: int = 0, fast_memory_size: int = 0) -> DriverResult:
    """Run the driver's checks in its order; substitute fast memory like ``ethosu_invoke_async``."""
    def fail(reason):
        return DriverResult(False, reason, tuple(bases))

    if len(payload) < 4 or struct.unpack_from("<I", payload)[0] != MAGIC:
        return fail("custom data does not start with the COP1 magic")
    if len(payload) % 4:
        return fail(f"custom data size {len(payload)} is not a multiple of 4")
    if len(bases) > MAX_BASES:
        return fail(f"{len(bases)} base addresses, the NPU has {MAX_BASES} BASEP registers")
    if len(payload) >= 20 and payload[4] == 1:
        config, ident = struct.unpack_from("<II", payload, 8)
        mismatch = _config_mismatch(config, ident, acc)
        if mismatch:
            return fail(mismatch)
    if stream_address % ALIGN:
        return fail(f"command stream at 0x{stream_address:x} is not 16-byte aligned")
    # BASEP is 32 bits wide on U55 (the driver writes the low word only), 40 bits on U65/U85.
    mask = (1 << 32) - 1 if acc.family == "ethos-u55" else (1 << 40) - 1
    bases = [Base(b.region, b.address & mask, b.size) for b in bases]
    if fast_memory and len(bases) > FAST_MEMORY_BASE_ADDR_INDEX:
        fast = bases[FAST_MEMORY_BASE_ADDR_INDEX]
        if fast.size > fast_memory_size:
            return fail(f"fast memory area too small: {fast.size} > {fast_memory_size}")
        bases[FAST_MEMORY_BASE_ADDR_INDEX] = Base(fast.region, fast_memory, fast.size)
    for b in bases:
        if b.address % ALIGN:
            return fail(f"base address {b.region} (0x{b.address:x}) is not 16-byte aligned")
    return DriverResult(True, None, tuple(bases))
