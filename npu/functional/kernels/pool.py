"""Max and average pooling. Padded positions take no part: max ignores them, and the
average counts only the IFM elements under the kernel (the divisor comes from the
stream's OFM scale, or from the element count where the kernel overlaps the padding)."""
from __future__ import annotations

import numpy as np

from npu.functional.kernels.conv import windows

_NONE = np.iinfo(np.int64).min


def max_pool(ifm, kernel, stride, pad, out_hw) -> np.ndarray:
    win = windows(ifm, kernel, stride, (1, 1), pad, out_hw, fill=_NONE)
    return win.max(axis=(3, 4))


def sum_pool(ifm, kernel, stride, pad, out_hw) -> tuple[np.ndarray, np.ndarray | int]:
    """(sum, count of real elements) per output element; without padding the count is the
    kernel's size everywhere."""
    total = windows(ifm, kernel, stride, (1, 1), pad, out_hw).sum(axis=(3, 4))
    if not any(pad):
        return total, kernel[0] * kernel[1]
    ones = np.ones(ifm.shape[:2] + (1,), dtype=np.int64)
    count = windows(ones, kernel, stride, (1, 1), pad, out_hw).sum(axis=(3, 4))
    return total, count


def average(total, count) -> np.ndarray:
    """total / count rounded half away from zero."""
    half = np.asarray(count) // 2
    return np.where(total >= 0, (total + half) // count, -((-total + half) // count))
