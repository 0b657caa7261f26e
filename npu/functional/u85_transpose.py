"""An Ethos-U85 OFM written transposed: where each computed element lands.

Facts (ethos-u-vela 5.2.0):
- ``OFM_PRECISION.activation_transpose`` names the written map's axes H, W, C in terms of the
  computed OFM's: ``ACTIVATION_TRANSPOSE_WCH`` writes the computed element (h, w, c) at row w,
  column c, channel h of the written map. Vela maps its ``TransposeType`` masks NWHC, NHCW, NWCH,
  NCHW, NCWH onto WHC, HCW, WCH, CHW, CWH (``ToActivationTranspose`` in
  ``ethos_u85_register_cs_generator.cpp``; the masks in ``common/transpose_type.hpp`` list, from
  the depth nibble up, which input axis each output axis takes, and ``Shape::Permute`` applies
  them); field values 4 and 5 have no name (``ethos_u85_interface.hpp``).
- ``OFM_HEIGHT/WIDTH/DEPTH_M1`` hold the computed shape ("shape *before* transposition": the
  output box ``Unpermute``d), while the tile registers ``OFM_HEIGHT0/1_M1``, ``OFM_WIDTH0_M1``,
  the bases and the strides describe the written map ("shape *after* transposition",
  ``GenerateOFM``). So the written values are the computed ones with their axes permuted,
  laid down by the OFM registers as any other map.
- Vela never combines a transpose with a chained OFM or with ``activation_reverse``
  (asserted in ``GenerateOFMPrecision``).
"""
from __future__ import annotations

import numpy as np

PREFIX = "ACTIVATION_TRANSPOSE_"
COMPUTED = "HWC"
PLAIN = PREFIX + COMPUTED


def permutation(mode: str) -> tuple[int, int, int] | None:
    """The numpy axes order that turns the computed (h, w, c) OFM into the written map, or None
    for a field value with no name (``****``) or any other text."""
    axes = mode[len(PREFIX):] if mode.startswith(PREFIX) else ""
    if sorted(axes) != sorted(COMPUTED):
        return None
    return tuple(COMPUTED.index(a) for a in axes)


def written(values: np.ndarray, axes: tuple[int, int, int] | None) -> np.ndarray:
    """The OFM as the registers lay it down: `values` (h, w, c) with its axes permuted (a copy in
    C order, as the feature-map writer needs), or `values` itself when nothing is transposed."""
    if axes is None or axes == (0, 1, 2):
        return values
    return np.ascontiguousarray(values.transpose(axes))
