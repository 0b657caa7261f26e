"""Mutated real streams: never anything but a result or a clean InputError, always terminating."""
from __future__ import annotations

import struct

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import npu.api
from npu.errors import InputError
from npu.read.model import load_model

BUDGET = 50_000_000


def _mutate(data: bytes, edits) -> bytes:
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    for index, value, mode in edits:
        i = index % len(words)
        if mode == 0:
            words[i] = value
        elif mode == 1:
            words[i] ^= 1 << (value % 32)
        else:
            del words[i:i + 1 + value % 3]
            if not words:
                break
    return struct.pack(f"<{len(words)}I", *words)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 0xFFFFFFFF), st.integers(0, 2)),
                      min_size=1, max_size=6))
@example(edits=[(189, 2, 0)])   # drops OFM_REGION: the OFM goes to region 0, never based
def test_mutated_streams(compiled, edits):
    for c in compiled[::4]:
        payload = load_model(c.blob).cop1.data
        mutated = _mutate(payload, edits)
        try:
            model = load_model(mutated)
        except InputError as e:
            assert e.what
            continue
        result = npu.api.run(model, **c.config, budget=BUDGET)
        assert result.status in ("ok", "hang", "error")
        assert result.cycles["total"] <= BUDGET
        if result.status != "ok":
            assert result.diagnosis


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 0xFFFFFFFF)), min_size=1, max_size=6))
def test_mutated_register_values(compiled, edits):
    """Keep every opcode, change parameters and payloads: the emulator itself is exercised."""
    outcomes = set()
    for c in compiled[1::3]:
        model = load_model(c.blob)
        data, first = model.cop1.data, model.cop1.stream_offset // 4
        words = list(struct.unpack(f"<{len(data) // 4}I", data))
        for index, value in edits:
            i = first + index % (len(words) - first)
            if words[i - 1] & 0x4000 and i - 1 >= first:
                words[i] = value                                    # a cmd1 payload word
            else:
                words[i] = (words[i] & 0xFFFF) | (value & 0xFFFF0000)  # a parameter
        try:
            result = npu.api.run(struct.pack(f"<{len(words)}I", *words), **c.config, budget=BUDGET)
        except InputError as e:
            outcomes.add("input error")
            assert e.what
            continue
        outcomes.add(result.status)
        assert result.cycles["total"] <= BUDGET and (result.status == "ok") == (result.diagnosis is None)
    assert outcomes
