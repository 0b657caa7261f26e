"""region_needs: how far the stream reaches into each region, checked against Vela's own sizes."""
from __future__ import annotations

import numpy as np
import pytest

import npu.api
from weaklink.builders import firmware as fixtures


@pytest.mark.parametrize("target", ["u55", "u85"])
def test_needs_match_the_buffers_vela_allocated(cross_toolchain, target):
    blob = fixtures.model_blob(target)
    npz = np.load(blob.with_suffix("") / f"{fixtures.FIXTURE_NETWORK}_vela.npz", allow_pickle=True)
    needs = npu.api.region_needs(blob.read_bytes(), fixtures.TARGETS[target].accelerator)
    assert needs[1] == int(npz["scratch_size"])
    assert needs[0] <= len(npz["weight_data"].item())
    if int(npz["scratch_fast_size"]):
        assert needs[int(npz["scratch_fast_region"])] == int(npz["scratch_fast_size"])
    else:
        assert 2 not in needs
