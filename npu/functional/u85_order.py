"""Ethos-U85 weight order: where each value of a weight stream comes from.

Facts (ethos-u-vela 5.2.0, ``ethosu/regor/architecture/ethosu85/ethos_u85_weight_encoder.cpp``,
``EthosU85WeightOrdering::GetNext`` and ``EthosU85WeightOrderingFwd``). The loops, outermost
first:
1. OFM blocks of ``OFM_BLK_DEPTH``;
2. IFM blocks of the IFM block depth, serpentine: forward in even OFM blocks, backward in
   odd ones (depthwise has one IFM block);
3. sub-kernels of at most (8/dilation)^2: columns outer, rows inner;
4. IFM micro-blocks (the whole IFM block, except 8 deep for 16-bit part-kernel; depthwise 1);
5. OFM micro-blocks of the ``ACC_FORMAT`` micro-block depth;
6. stride phases y, x (part-kernel and depthwise; depth-first has one phase);
7. kernel rows, every odd row right to left, then kernel columns;
8. IFM steps of 8 (16 when 2:4 sparse, 1 for depthwise);
9. output channels: core c of n takes channels c*4 .. c*4+3, then the next 4*n further on,
   within the micro-block (this is the split across the per-core streams);
10. IFM channels of the step.
Positions past the IFM or OFM depth are zeros. The kernel elements of a sub-kernel are
rounded up to a multiple of 1 (depth-first), 5 (8-bit part-kernel) or 10 (16-bit or sparse
part-kernel, depthwise), and the missing elements are emitted as zeros. Depthwise adds 0, 2 or
6 zero elements after each group of 10 (8-bit at up to 256 MACs / up to 512 MACs / more).
The fast format (``WEIGHT_FORMAT_FWD``) is one stream: with several cores, the per-core orders
are interleaved in blocks of OFM micro-block depth x IFM micro-block depth x rounding / cores.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

DEPTH_FIRST, PART_KERNEL, DEPTHWISE = "depth_first", "part_kernel", "depthwise"
INTERLEAVE = 4            # output channels a core takes at a time
SUBKERNEL_MAX = 8
# The Vela release whose block-config rule (ifm_block_depth) the decoder follows; the tests
# compare every compiled stream against the model's weights with this release.
VELA_VERSION = "5.2.0"


def ifm_block_depth(kind: str, ifm_bits: int, macs: int, ofm_ublock: int, sparse: bool) -> int:
    """No register carries the IFM block depth: it is Vela's choice (``ArchEthosU85::
    FindBlockConfig``, ``ethos_u85.cpp`` of ethos-u-vela 5.2.0): 16 for part-kernel-first; 32 for
    a 32-bit IFM, or at 128/256 MACs with a 16-deep OFM micro-block and no sparsity; 128 for
    sparse 8-bit; otherwise 64. Depthwise traverses one IFM channel, so the value is unused."""
    if kind == PART_KERNEL:
        return 16
    if ifm_bits == 32 or (macs in (128, 256) and ofm_ublock == 16 and not sparse):
        return 32
    if sparse and ifm_bits == 8:
        return 128
    return 64


@dataclass(frozen=True)
class U85Traversal:
    """What a U85 weight order depends on: the stream's registers and the accelerator."""
    kind: str                       # depth_first, part_kernel, depthwise
    kh: int                         # undilated kernel
    kw: int
    cin: int                        # IFM depth (1 for depthwise)
    cout: int                       # OFM depth of the operation
    ofm_block_depth: int            # OFM_BLK_DEPTH_M1 + 1
    ofm_ublock: int                 # micro-block depth: MACs / (8 * ACC_FORMAT micro-block h * w)
    ifm_block: int                  # ifm_block_depth()
    cores: int = 1
    macs: int = 256
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    ifm_bits: int = 8
    sparse: bool = False

    @property
    def ifm_ublock(self) -> int:
        if self.kind == DEPTHWISE:
            return 1
        if self.kind == PART_KERNEL and self.ifm_bits == 16 and not self.sparse:
            return 8
        return self.ifm_block

    @property
    def rounding(self) -> int:
        if self.kind == DEPTH_FIRST:
            return 1
        if self.kind == PART_KERNEL and self.ifm_bits == 8 and not self.sparse:
            return 5
        return 10

    @property
    def ifm_step(self) -> int:
        return 1 if self.kind == DEPTHWISE else (16 if self.sparse else 8)

    @property
    def dw_padding(self) -> int:
        if self.ifm_bits != 16 and self.macs <= 256:
            return 0
        return 2 if self.macs <= 512 else 6

    @property
    def source_cin(self) -> int:
        return 1 if self.kind == DEPTHWISE else self.cin

    def check(self) -> str | None:
        """Why the registers cannot describe a weight order, or None."""
        if min(self.kh, self.kw, self.cin, self.cout, self.ofm_block_depth, self.ofm_ublock) < 1:
            return "a zero kernel, depth or block size"
        if self.ofm_ublock % (INTERLEAVE * self.cores):
            return (f"OFM micro-block depth {self.ofm_ublock} does not split into {self.cores} core(s) of "
                    f"{INTERLEAVE} channels")
        if self.ifm_ublock % self.ifm_step:
            return f"IFM micro-block depth {self.ifm_ublock} is not a multiple of {self.ifm_step}"
        if self.kind == DEPTHWISE and self.sparse:
            return "2:4 sparsity on depthwise weights (Vela never encodes it)"
        return None


def _elements(sub_h: int, sub_w: int, stride: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(y, x) of each kernel element of a sub-kernel, in stream order: stride phases, then rows
    (odd rows reversed), then columns."""
    sy, sx = stride
    ys, xs = [], []
    for py in range(sy):
        rows = (sub_h + sy - 1 - py) // sy
        for px in range(sx):
            cols = (sub_w + sx - 1 - px) // sx
            for ky in range(rows):
                order = range(cols) if ky % 2 == 0 else range(cols - 1, -1, -1)
                for i in order:
                    ys.append(py + ky * sy)
                    xs.append(px + i * sx)
    return np.asarray(ys, dtype=np.int64), np.asarray(xs, dtype=np.int64)


def _ifm_blocks(t: U85Traversal, ofm_block_index: int) -> list[int]:
    if t.kind == DEPTHWISE:
        return [0]
    blocks = list(range(0, t.cin, t.ifm_block))
    return blocks if ofm_block_index % 2 == 0 else blocks[::-1]


@functools.lru_cache(maxsize=512)
def core_order(t: U85Traversal, core: int) -> np.ndarray:
    """Index of each value of core `core`'s stream into the flat (cout, kh, kw, source_cin)
    weights, -1 for a padding value."""
    stride = (1, 1) if t.kind == DEPTH_FIRST else t.stride
    decomp_h, decomp_w = SUBKERNEL_MAX // t.dilation[0], SUBKERNEL_MAX // t.dilation[1]
    cin = t.source_cin
    oz = (np.arange(core * INTERLEAVE, t.ofm_ublock, INTERLEAVE * t.cores)[:, None]
          + np.arange(INTERLEAVE)[None, :]).ravel()                          # channels of this core
    inner = np.arange(0, t.ifm_ublock, t.ifm_step)[:, None] + np.arange(t.ifm_step)[None, :]   # (steps, step)
    per_element = inner.size * oz.size
    pad_unit = t.ofm_ublock // t.cores
    pieces = []
    for bi, ofm_b in enumerate(range(0, t.cout, t.ofm_block_depth)):
        ofm_bd = min(t.ofm_block_depth, t.cout - ofm_b)
        for ifm_b in _ifm_blocks(t, bi):
            ifm_bd = 1 if t.kind == DEPTHWISE else min(t.ifm_block, t.cin - ifm_b)
            for sx in range(0, t.kw, decomp_w):
                sub_w = min(t.kw - sx, decomp_w)
                for sy in range(0, t.kh, decomp_h):
                    sub_h = min(t.kh - sy, decomp_h)
                    ey, ex = _elements(sub_h, sub_w, stride)
                    rounded = -(-len(ey) // t.rounding) * t.rounding
                    for iu in range(0, ifm_bd, t.ifm_ublock):
                        ifm_z = (ifm_b + iu + inner)[None, :, None, :]               # (1, steps, 1, step)
                        for ou in range(0, ofm_bd, t.ofm_ublock):
                            ofm_z = (ofm_b + ou + oz)[None, None, :, None]           # (1, 1, ch, 1)
                            yy = (sy + ey)[:, None, None, None]
                            xx = (sx + ex)[:, None, None, None]
                            flat = ((ofm_z * t.kh + yy) * t.kw + xx) * cin + ifm_z
                            valid = (ifm_z < cin) & (ofm_z < t.cout)
                            block = np.where(valid, flat, -1).reshape(len(ey), per_element)
                            pieces.append(_padded(t, block, rounded, pad_unit))
    return np.concatenate(pieces) if pieces else np.zeros(0, np.int64)


def _padded(t: U85Traversal, block: np.ndarray, rounded: int, pad_unit: int) -> np.ndarray:
    """One sub-kernel's elements with the padding the order adds: depthwise zeros after each
    element that leaves a multiple of 10 still to go, then the rounding remainder."""
    n = len(block)
    remaining = rounded - n
    if t.kind == DEPTHWISE and t.dw_padding:
        extra = t.dw_padding * pad_unit
        left_after = rounded - np.arange(1, n + 1)
        wide = np.full((n, block.shape[1] + extra), -1, dtype=np.int64)
        wide[:, :block.shape[1]] = block
        keep = np.ones(wide.shape, dtype=bool)
        keep[left_after % t.rounding != 0, block.shape[1]:] = False
        body = wide[keep]
    else:
        body = block.ravel()
    if remaining <= 0:
        return body
    tail = (remaining + (t.dw_padding if t.kind == DEPTHWISE else 0)) * t.ifm_ublock * pad_unit
    return np.concatenate([body, np.full(tail, -1, dtype=np.int64)])


@functools.lru_cache(maxsize=256)
def fast_order(t: U85Traversal) -> np.ndarray:
    """The single fast-format stream: the per-core orders interleaved block by block."""
    orders = [core_order(t, c) for c in range(t.cores)]
    if t.cores == 1:
        return orders[0]
    block = t.ofm_ublock * t.ifm_ublock * t.rounding // t.cores
    n = len(orders[0])
    pieces = []
    for start in range(0, n, block):
        for o in orders:
            pieces.append(o[start:start + block])
    return np.concatenate(pieces)
