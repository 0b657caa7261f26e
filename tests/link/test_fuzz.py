"""Mutated real objects and archives (truncated, bytes flipped, words overwritten): the model
either gives a result or raises InputError — never another exception."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from snippets import comm, data, func, ref, start
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import weaklink.resolve
from weaklink import toolchain
from weaklink.errors import InputError
from weaklink.scenario import Scenario


@pytest.fixture(scope="module")
def originals():
    if not toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed; needed to build the fuzz seeds")
    root = Path(tempfile.mkdtemp(prefix="weaklink-fuzz-"))
    sc = Scenario(root)
    sc.asm("m.o", start("q1", "c") + comm("c", 4))
    sc.asm("q1.o", func("q1") + ref("q2") + ref("w", True))
    sc.asm("q2.o", data("q2") + data("c", size=8))
    sc.asm("g.o", '.section .text.g,"axG",%progbits,g,comdat\n.weak g\ng: bx lr\n')
    sc.archive("libq.a", ["q1.o", "q2.o", "g.o"])
    sc.archive("libt.a", ["q1.o", "q2.o"], thin=True)
    yield {name: (root / name).read_bytes() for name in ("m.o", "libq.a", "libt.a")}, root
    shutil.rmtree(root, ignore_errors=True)


def mutations():
    truncate = st.tuples(st.just("truncate"), st.integers(0, 4000), st.just(0))
    flip = st.tuples(st.just("flip"), st.integers(0, 4000), st.integers(1, 255))
    word = st.tuples(st.just("word"), st.integers(0, 1000), st.sampled_from(
        [0, 1, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x10000, 60]))
    return st.lists(st.one_of(truncate, flip, word), min_size=1, max_size=4)


def mutate(blob: bytes, ops) -> bytes:
    b = bytearray(blob)
    for op, at, val in ops:
        if not b:
            break
        if op == "truncate":
            del b[at % len(b):]
        elif op == "flip":
            b[at % len(b)] ^= val
        else:
            k = (at * 4) % max(len(b) - 4, 1)
            b[k:k + 4] = val.to_bytes(4, "little")
    return bytes(b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(["m.o", "libq.a", "libt.a"]), ops=mutations(),
       extra=st.sampled_from([[], ["--gc-sections"], ["--gc-sections", "--wrap=q1"]]))
def test_mutated_inputs_give_result_or_input_error(originals, target, ops, extra):
    """Also with --gc-sections, which reads section headers, groups and relocations."""
    blobs, root = originals
    bad = root / f"bad_{target}"
    bad.write_bytes(mutate(blobs[target], ops))
    others = [n for n in ("m.o", "libq.a") if n != target]
    try:
        res = weaklink.resolve.link(["-e", "_start", *extra, f"bad_{target}", *others, "-u", "g"],
                            cwd=root, why_not=["q2", "c"])
        res.to_json()
    except InputError as exc:
        assert exc.path and str(exc)
