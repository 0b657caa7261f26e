"""Convolution, depthwise convolution and fully connected (a 1x1 convolution on Ethos-U).

The NPU pads with the IFM zero point, which is zero once the zero point is subtracted.
Accumulation is exact in floating point whenever every partial sum is an integer the
format represents: an 8-bit IFM (after the zero point, |x| <= 255) times a 9-bit weight is
below 2**16, so float32 is exact for up to 2**24 / 65280 = 257 terms per output and float64
for far more than any kernel has. The sum's order (BLAS blocking) then does not matter.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def padded(ifm: np.ndarray, kernel, stride, dilation, pad, out_hw, fill=0) -> np.ndarray:
    """The IFM with the padding the kernel window sees, cropped to what the OFM needs."""
    (kh, kw), (sy, sx), (dy, dx) = kernel, stride, dilation
    oh, ow = out_hw
    need_h, need_w = (oh - 1) * sy + (kh - 1) * dy + 1, (ow - 1) * sx + (kw - 1) * dx + 1
    top, left = pad[0], pad[1]
    h, w, c = ifm.shape
    if top == 0 and left == 0 and need_h <= h and need_w <= w:
        return ifm[:need_h, :need_w]
    out = np.full((need_h, need_w, c), fill, dtype=ifm.dtype)
    rows, cols = min(h, need_h - top), min(w, need_w - left)
    out[top:top + rows, left:left + cols] = ifm[:rows, :cols]
    return out


def windows(ifm: np.ndarray, kernel, stride, dilation, pad, out_hw, fill=0) -> np.ndarray:
    """(OH, OW, C, KH, KW) views of the padded IFM (pad = top, left, bottom, right)."""
    (kh, kw), (sy, sx), (dy, dx) = kernel, stride, dilation
    oh, ow = out_hw
    p = padded(ifm, kernel, stride, dilation, pad, out_hw, fill)
    view = sliding_window_view(p, ((kh - 1) * dy + 1, (kw - 1) * dx + 1), axis=(0, 1))
    return view[::sy, ::sx, :, ::dy, ::dx][:oh, :ow]


EXACT_FLOAT32_TERMS = (1 << 24) // (255 * 256)


def exact_float(terms: int, ifm_bits: int = 8):
    return np.float32 if ifm_bits == 8 and terms <= EXACT_FLOAT32_TERMS else np.float64


def conv2d(ifm, weights, stride, dilation, pad, out_hw, ifm_bits: int = 8) -> np.ndarray:
    """weights (Cout, KH, KW, Cin) -> accumulators (OH, OW, Cout) int64."""
    cout, kh, kw, cin = weights.shape
    oh, ow = out_hw
    ftype = exact_float(kh * kw * cin, ifm_bits)
    w = weights.reshape(cout, -1).T.astype(ftype)
    if kh == kw == 1:
        p = padded(ifm, (1, 1), stride, dilation, pad, out_hw)[::stride[0], ::stride[1]][:oh, :ow]
        cols = p.reshape(oh * ow, cin).astype(ftype)
    else:
        win = windows(ifm, (kh, kw), stride, dilation, pad, out_hw)          # (OH, OW, Cin, KH, KW)
        cols = win.transpose(0, 1, 3, 4, 2).astype(ftype).reshape(oh * ow, kh * kw * cin)
    return (cols @ w).astype(np.int64).reshape(oh, ow, cout)


def depthwise2d(ifm, weights, stride, dilation, pad, out_hw, ifm_bits: int = 8) -> np.ndarray:
    """weights (C, KH, KW, 1) -> accumulators (OH, OW, C) int64: one multiply-add per tap."""
    c, kh, kw, _ = weights.shape
    (sy, sx), (dy, dx) = stride, dilation
    oh, ow = out_hw
    ftype = exact_float(kh * kw, ifm_bits)
    p = padded(ifm[:, :, :c].astype(ftype), (kh, kw), stride, dilation, pad, out_hw)
    w = weights[..., 0].astype(ftype)
    acc = np.zeros((oh, ow, c), dtype=ftype)
    product = np.empty_like(acc)
    for i in range(kh):
        for j in range(kw):
            tap = p[i * dy:i * dy + (oh - 1) * sy + 1:sy, j * dx:j * dx + (ow - 1) * sx + 1:sx]
            np.multiply(tap, w[:, i, j], out=product)
            acc += product
    return acc.astype(np.int64)
