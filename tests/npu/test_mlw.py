"""The emulator's mlw decoder (npu/functional/mlw.py) against Vela's own, ``ethosu.mlw_codec.decode``
(the installed Vela is the oracle): every weight stream of every model the tests compile decodes
to the same values; streams Vela's encoder writes from weights of every kind, alone and end to
end; and what Vela's decoder cannot survive (a stream that stops inside its data ends its
process) is one error naming the bit, with no Vela needed at all."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from npu.errors import InputError
from npu.functional import mlw
from npu.tools import mlw_streams

mlw_codec = pytest.importorskip("ethosu.mlw_codec")
REPO = Path(__file__).resolve().parents[2]

from test_functional import CONFIGS as FUNCTIONAL_CONFIGS, OPERATOR_NETWORKS  # noqa: E402


def _oracle(data: bytes) -> np.ndarray:
    return np.asarray(mlw_codec.decode(bytearray(data)), dtype=np.int64)


def _same(data: bytes) -> None:
    got, want = mlw.decode(data), _oracle(data)
    assert len(got) == len(want) and np.array_equal(got, want)


def test_every_stream_of_every_compiled_model(compiled, generator, model_cache):
    """The fixture networks in every config, the operator networks in the functional tests'
    configs, and whatever else the tests have compiled into the model cache."""
    required = {c.npz for c in compiled}
    for network in [*OPERATOR_NETWORKS, "broadcast", "random00"]:
        for cfg in FUNCTIONAL_CONFIGS.values():
            required.add(generator.compile_network(network, *cfg, model_cache) / f"{network}_vela.npz")
    streams, models = [], 0
    for path in sorted(required | set(mlw_streams.model_files([model_cache]))):
        try:
            found, lost, n = mlw_streams.streams(path)
        except InputError:
            assert path not in required and path.suffix == ".tflite", path   # a network before Vela
            continue
        assert lost == 0, path
        streams += found
        models += n
    assert models >= 100 and len(streams) >= 500
    bad = [f"{s.model} 0x{s.op_offset:06x} core {s.core}: {why}"
           for s in streams if (why := mlw_streams.compare(s, mlw_codec))]
    assert not bad, "\n".join(bad[:10])


def _weights(rng, n: int, kind: str) -> list[int]:
    if kind == "palette":
        return rng.choice([-90, -3, 0, 5, 17, 120], size=n).tolist()
    w = rng.integers(-255, 256, size=n)
    if kind == "sparse":
        w[rng.random(n) < 0.8] = 0
    elif kind == "zeros":
        w[:] = 0
    elif kind == "small":
        w = rng.integers(-3, 4, size=n)
    return w.tolist()


@pytest.mark.parametrize("kind", ["dense", "sparse", "palette", "small", "zeros"])
@pytest.mark.parametrize("n", [1, 7, 300, 9000])
def test_streams_vela_encodes(kind, n):
    rng = np.random.default_rng(n)
    data = bytes(mlw_codec.encode(_weights(rng, n, kind)))
    _same(data)
    assert len(mlw.decode(data)) == n


def test_streams_end_to_end():
    """Several streams, each ended and padded with 0xff to 16 bytes, read as one (how Vela 3.x
    laid out a buffer's substreams): the decoder starts a new palette after each end."""
    rng = np.random.default_rng(3)
    parts = [bytes(mlw_codec.encode(_weights(rng, n, kind)))
             for n, kind in ((40, "dense"), (500, "sparse"), (33, "palette"))]
    data = b"".join(parts)
    _same(data)
    assert len(mlw.decode(data)) == 40 + 500 + 33


def test_a_stream_that_stops_inside_its_data_is_one_error():
    data = bytes(mlw_codec.encode(list(range(-200, 200))))
    with pytest.raises(mlw.MlwError, match=r"the stream ends inside its data: \w+ needs \d+ bits at bit \d+"):
        mlw.decode(data[:len(data) // 2])
    with pytest.raises(mlw.MlwError, match="ends inside its data"):
        mlw.decode(b"")


def test_decoding_needs_no_vela():
    """A plain install has no ethos-u-vela: the decoder must not reach for it."""
    data = bytes(mlw_codec.encode([5, -7, 0, 0, 120]))
    code = ("import sys; sys.modules['ethosu'] = None\n"
            "from npu.functional import mlw\n"
            f"print(mlw.decode({data!r}).tolist())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[5, -7, 0, 0, 120]", done.stderr
