"""The Ethos-U55/U65 activation lookup tables (``ACTIVATION_FUNCTION_TABLE_k``).

Facts (ethos-u-vela 5.2.0: ``lut.py``, ``register_command_stream_generator.py`` and
``softmax.py``; the emulator follows them):
- The tables live in the last 2 KB of SHRAM (``shram_lut_address``), filled by a DMA into
  SHRAM. ``k`` counts 256-byte slots from there (``get_lut_index``): an 8-bit table is one
  slot, a table of 256 32-bit entries four, a 16-bit OFM's 512 32-bit entries all eight.
- 8-bit OFM: the clamped OFM value indexes the table (value + 128 for signed), the entry is
  the output byte.
- 32-bit OFM (the exp table of Vela's int8 softmax): the NPU clamps the value to the int8
  range (``activation_clip_range = FORCE_INT8``, which Vela sets together with a table and
  an int32 OFM), indexes 256 32-bit entries with value + 128 and writes the entry as the
  int32 output.
- 16-bit OFM (Vela's int16 softmax and EXP): 512 32-bit entries, each ``slope * 2**16 +
  base`` (``lut.py`` ``create_lut_int16_op``: base = the sampled value, slope = the next
  sample minus it). The int16 value v selects entry ``(v + 32768) >> 7`` and its low 7 bits
  interpolate: ``base + ((slope * (v & 0x7f) + 64) >> 7)``, TensorFlow Lite's
  ``generic_int16_table_lookup`` that Vela's tables are generated for.
"""
from __future__ import annotations

import numpy as np

LUT_AREA = 2048           # bytes at the end of SHRAM that hold the tables
LUT_SLOT = 256            # bytes per table index step
ENTRIES = {8: (256, np.int8, np.uint8), 16: (512, np.dtype("<i4"), np.dtype("<i4")),
           32: (256, np.dtype("<i4"), np.dtype("<u4"))}                # OFM bits -> entries


class LutError(ValueError):
    """A table the NPU could not read: the engine turns it into one line."""


def lookup(shram: np.ndarray, table: int, values: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """The table's entries for clamped OFM `values` (int64 in, int64 out). A 32-bit OFM's
    values were clamped to int8, so they index from -128 whatever the OFM's signedness."""
    if bits not in ENTRIES:
        raise LutError(f"a lookup table on a {bits}-bit OFM is not modelled")
    count, signed_type, unsigned_type = ENTRIES[bits]
    entry = np.dtype(signed_type if signed else unsigned_type)     # an entry is an OFM element
    start = len(shram) - LUT_AREA + table * LUT_SLOT
    end = start + count * entry.itemsize
    if start < 0:
        raise LutError("no SHRAM size is known for the lookup table")
    if end > len(shram):
        raise LutError(f"table {table} of {count} {bits}-bit entries ends at SHRAM byte {end}, "
                       f"past its {len(shram)} bytes")
    lut = shram[start:end].view(entry)
    if bits == 16:
        return _interpolate(lut.astype(np.int64), values)
    index = values + 128 if signed or bits == 32 else values
    if index.size and (index.min() < 0 or index.max() >= count):
        raise LutError(f"OFM values {int(values.min())}..{int(values.max())} index outside the "
                       f"table's {count} entries")
    return lut[index].astype(np.int64)


def _interpolate(lut: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A 16-bit OFM's table: base and slope of the entry the top 9 bits of the int16 value
    select, the low 7 bits interpolating between them."""
    if values.size and (values.min() < -32768 or values.max() > 32767):
        raise LutError(f"OFM values {int(values.min())}..{int(values.max())} are outside int16")
    entry = lut[(values + 32768) >> 7]
    base = ((entry & 0xFFFF) ^ 0x8000) - 0x8000             # the low half, signed
    slope = (entry - base) >> 16
    return base + ((slope * (values & 0x7F) + 64) >> 7)
