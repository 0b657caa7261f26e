"""Convolution, depthwise convolution and fully connected (a 1x1 convolution on Ethos-U).

The NPU pads with the IFM zero point, which is zero once the zero point is subtracted.
Accumulation is exact: int8 x int9 products summed over at most a few hundred thousand
terms stay far below 2**53, so float64 BLAS gives the integer result exactly.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def windows(ifm: np.ndarray, kernel, stride, dilation, pad, out_hw, fill=0) -> np.ndarray:
    """(OH, OW, C, KH, KW) views of the padded IFM (pad = top, left, bottom, right)."""
    (kh, kw), (sy, sx), (dy, dx) = kernel, stride, dilation
    oh, ow = out_hw
    span_h, span_w = (kh - 1) * dy + 1, (kw - 1) * dx + 1
    need_h, need_w = (oh - 1) * sy + span_h, (ow - 1) * sx + span_w
    top, left = pad[0], pad[1]
    h, w, c = ifm.shape
    bottom, right = max(need_h - top - h, 0), max(need_w - left - w, 0)
    padded = np.pad(ifm, ((top, bottom), (left, right), (0, 0)), constant_values=fill)[:need_h, :need_w]
    view = sliding_window_view(padded, (span_h, span_w), axis=(0, 1))
    return view[::sy, ::sx, :, ::dy, ::dx][:oh, :ow]


def conv2d(ifm, weights, stride, dilation, pad, out_hw) -> np.ndarray:
    """weights (Cout, KH, KW, Cin) -> accumulators (OH, OW, Cout) int64."""
    cout, kh, kw, cin = weights.shape
    win = windows(ifm, (kh, kw), stride, dilation, pad, out_hw)          # (OH, OW, Cin, KH, KW)
    oh, ow = win.shape[:2]
    cols = win.transpose(0, 1, 3, 4, 2).reshape(oh * ow, kh * kw * cin).astype(np.float64)
    acc = cols @ weights.reshape(cout, -1).T.astype(np.float64)
    return np.rint(acc).astype(np.int64).reshape(oh, ow, cout)


def depthwise2d(ifm, weights, stride, dilation, pad, out_hw) -> np.ndarray:
    """weights (C, KH, KW, 1) -> accumulators (OH, OW, C) int64."""
    c, kh, kw, _ = weights.shape
    win = windows(ifm[:, :, :c], (kh, kw), stride, dilation, pad, out_hw)  # (OH, OW, C, KH, KW)
    return np.einsum("hwckl,ckl->hwc", win, weights[..., 0].astype(np.int64))
