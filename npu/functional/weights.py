"""Ethos-U55/U65 weight streams: decode the compressed stream, undo the brick order.

Facts (Vela's ``weight_compressor.py`` and the ``mlw_codec`` reorder it calls):
- A kernel operation's weight stream is one ``mlw_codec`` stream of 9-bit values: the weights
  with their zero point already subtracted, laid out in the hardware's traversal order,
  with zeros where the traversal runs past the kernel, the IFM depth or the OFM depth.
- The traversal: OFM blocks of the block-config depth (``OFM_BLK_DEPTH``); in each, IFM
  blocks (32 deep for 8-bit depth-first, 16 for part-kernel-first; depthwise has one);
  sub-kernels of at most 8x8 (halved per dilated axis); then
  - depth-first: OFM micro-blocks, kernel elements, IFM micro-blocks, OFM micro-block
    depth, IFM micro-block depth;
  - part-kernel-first: IFM micro-blocks, OFM micro-blocks, kernel elements (padded to a
    multiple of 4 for 8-bit), OFM and IFM micro-block depth;
  - depthwise: OFM micro-blocks, kernel elements (padded to a multiple of 4), OFM
    micro-block depth, one IFM channel (the OFM's).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from npu.errors import InputError
from npu.functional import mlw

SUBKERNEL_MAX = 8
IFM_UBLOCK_DEPTH = 8       # every Ethos-U55/U65 config: IFM micro-block depth 8 (Vela ArchitectureConfig)


@dataclass(frozen=True)
class Traversal:
    """What the weight order depends on: the stream's registers and the accelerator."""
    kind: str                  # depth_first, part_kernel, depthwise
    kh: int
    kw: int
    cin: int                   # IFM depth the weights read (1 for depthwise)
    cout: int                  # OFM depth of the operation
    ofm_block_depth: int
    ifm_ublock: int            # accelerator IFM micro-block depth
    ofm_ublock: int            # accelerator OFM micro-block depth
    dilation: tuple[int, int] = (1, 1)
    ifm_bits: int = 8


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


@functools.lru_cache(maxsize=256)
def stream_order(t: Traversal) -> np.ndarray:
    """Index of each stream value into the flat (cout, kh, kw, cin) weight array, -1 for a
    padding value. Built once per traversal; the deep network repeats a few shapes."""
    depthwise, part = t.kind == "depthwise", t.kind == "part_kernel"
    ifm_block = 16 if part or t.ifm_bits == 16 else 32
    decomp_h, decomp_w = SUBKERNEL_MAX // t.dilation[0], SUBKERNEL_MAX // t.dilation[1]
    oz = np.arange(t.ofm_ublock)
    iz = np.arange(1 if depthwise else t.ifm_ublock)
    pieces = []
    for ofm_b in range(0, t.cout, t.ofm_block_depth):
        ofm_bd = min(t.ofm_block_depth, t.cout - ofm_b)
        for ifm_b in range(0, 1 if depthwise else t.cin, ifm_block):
            ifm_bd = t.ifm_ublock if depthwise else (min(ifm_block, t.cin - ifm_b) if part else ifm_block)
            for sy in range(0, t.kh, decomp_h):
                sub_h = min(t.kh - sy, decomp_h)
                for sx in range(0, t.kw, decomp_w):
                    sub_w = min(t.kw - sx, decomp_w)
                    elements = sub_h * sub_w
                    if part:
                        elements = _round_up(elements, 4 if t.ifm_bits == 8 else 2)
                    elif depthwise:
                        elements = _round_up(elements, 4)
                    el = np.arange(elements)
                    ky, kx = el // sub_w, el % sub_w
                    ifm_outer = range(0, ifm_bd, t.ifm_ublock) if part else (0,)
                    ifm_inner = (0,) if part else range(0, ifm_bd, t.ifm_ublock)
                    for iu_o in ifm_outer:
                        for ou in range(0, ofm_bd, t.ofm_ublock):
                            # axes: element, ifm_inner ublock, ofm z, ifm z
                            iu = np.asarray(ifm_inner)[None, :, None, None] + iu_o
                            ofm_z = (ofm_b + ou + oz)[None, None, :, None]
                            ifm_z = ifm_b + iu + iz[None, None, None, :]
                            yy = (sy + ky)[:, None, None, None]
                            xx = (sx + kx)[:, None, None, None]
                            valid = (ky < sub_h)[:, None, None, None] & (ofm_z < t.cout) & (
                                ifm_z < (1 if depthwise else t.cin))
                            flat = ((ofm_z * t.kh + yy) * t.kw + xx) * (1 if depthwise else t.cin) + ifm_z
                            shape = np.broadcast_shapes(flat.shape, valid.shape)
                            pieces.append(np.where(np.broadcast_to(valid, shape),
                                                   np.broadcast_to(flat, shape), -1).ravel())
    return np.concatenate(pieces) if pieces else np.zeros(0, np.int64)


def decode_weights(stream: bytes, t: Traversal, where: str = "weight stream") -> np.ndarray:
    """The (cout, kh, kw, cin) int32 weights (zero point already removed) of one stream.
    Cached by the stream's bytes: the bytes are always read from the emulated memory, so
    a corrupted stream decodes afresh."""
    return _decode(bytes(stream), t, where)


def mlw_values(stream: bytes, where: str) -> np.ndarray:
    """The values of one mlw stream (U55/U65, and each U85 default-format stream)."""
    try:
        return mlw.decode(stream)
    except mlw.MlwError as e:
        raise InputError(None, f"{where}: not a decodable mlw weight stream ({e})") from None


@functools.lru_cache(maxsize=512)
def _decode(stream: bytes, t: Traversal, where: str) -> np.ndarray:
    values = mlw_values(stream, where).astype(np.int32)
    order = stream_order(t)
    if len(values) < len(order):
        raise InputError(None, f"{where}: decodes to {len(values)} weights, the traversal needs {len(order)}")
    cin = 1 if t.kind == "depthwise" else t.cin
    out = np.zeros(t.cout * t.kh * t.kw * cin, dtype=np.int32)
    used = order >= 0
    out[order[used]] = values[:len(order)][used]
    out = out.reshape(t.cout, t.kh, t.kw, cin)
    out.flags.writeable = False
    return out
