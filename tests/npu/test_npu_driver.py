"""ethosu_invoke_v3's checks: what fails the invocation and what passes silently."""
from __future__ import annotations

import struct

import pytest

from npu.driver import Base, invoke_checks
from npu.hw import accelerator
from npu.read.model import load_model

U85 = accelerator("ethos-u85-256")


@pytest.fixture(scope="module")
def payload(u85_tiny):
    return load_model(u85_tiny.blob).cop1.data


def _bases(*addresses):
    return [Base(i, a, 0) for i, a in enumerate(addresses)]


def test_good_payload_passes(payload):
    r = invoke_checks(payload, _bases(0x70000000, 0x70100000, 0x31000000), U85)
    assert r.ok and r.reason is None


def test_zero_base_and_zero_size_pass_silently(payload):
    assert invoke_checks(payload, _bases(0x70000000, 0x70100000, 0), U85).ok
    assert invoke_checks(payload, [], U85).ok


@pytest.mark.parametrize("mutate, reason", [
    (lambda p: b"COP2" + p[4:], "COP1 magic"),
    (lambda p: p + b"\0\0", "multiple of 4"),
])
def test_payload_checks(payload, mutate, reason):
    r = invoke_checks(mutate(payload), _bases(0x70000000), U85)
    assert not r.ok and reason in r.reason


def test_optimizer_config_against_hardware(payload):
    r = invoke_checks(payload, _bases(0x70000000), accelerator("ethos-u85-512"))
    assert not r.ok and "optimizer config" in r.reason
    newer = bytearray(payload)
    struct.pack_into("<I", newer, 12, U85.id_word + (1 << 20))        # arch minor newer than the NPU
    assert "arch version" in invoke_checks(bytes(newer), [], U85).reason


def test_alignment(payload):
    assert "command stream" in invoke_checks(payload, [], U85, stream_address=0x1008).reason
    r = invoke_checks(payload, _bases(0x70000000, 0x70100004), U85)
    assert not r.ok and "base address 1" in r.reason


def test_at_most_eight_bases(payload):
    assert not invoke_checks(payload, _bases(*[0x70000000] * 9), U85).ok


def test_fast_memory_substitution(payload):
    bases = [Base(0, 0x70000000), Base(1, 0x70100000), Base(2, 0, 20816)]
    r = invoke_checks(payload, bases, U85, fast_memory=0x31000000, fast_memory_size=0x60000)
    assert r.ok and r.bases[2].address == 0x31000000
    small = invoke_checks(payload, bases, U85, fast_memory=0x31000000, fast_memory_size=16384)
    assert not small.ok and "too small" in small.reason
    untouched = invoke_checks(payload, bases[:2], U85, fast_memory=0x31000000, fast_memory_size=16384)
    assert untouched.ok and len(untouched.bases) == 2       # only when more than 2 bases are passed
