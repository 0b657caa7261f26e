"""Ethos-U85 OFMs written transposed, bit-exact against LiteRT.

Vela 5.x lowers a TFLite TRANSPOSE to operations whose OFM_PRECISION.activation_transpose names
the written map's axes (and fuses a TRANSPOSE after a convolution into it); the networks
(fixtures/models/transpose_nets.py) make it emit all five transposing modes, on U85-256 and
U85-512 in Dedicated_Sram_384KB and Sram_Only. Every output byte must be equal. Changing the
mode a stream names changes the output, so the comparison can fail."""
from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
from pathlib import Path

import numpy as np
import pytest

from npu.errors import InputError
from npu.functional import run_functional
from npu.functional.u85_transpose import permutation, written
from npu.hw import accelerator
from npu.read.model import load_model

from test_functional import U85_SYSTEM, placement, reference

MODES = ("Dedicated_Sram_384KB", "Sram_Only")
CONFIGS = {f"{acc}/{mode}": (acc, mode) for acc in ("ethos-u85-256", "ethos-u85-512") for mode in MODES}
TRANSPOSING = {"WHC", "HCW", "WCH", "CHW", "CWH"}
PREFIX = "ACTIVATION_TRANSPOSE_"
SEEDS = 2


def _nets():
    path = Path(__file__).resolve().parents[2] / "fixtures/models/transpose_nets.py"
    spec = importlib.util.spec_from_file_location("transpose_nets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NETS = _nets()


def compiled(generator, model_cache, network, config):
    """Vela's output for one network and config, compiled again when the .tflite or the Vela
    version changed."""
    from ethosu.vela import _version
    acc, mode = CONFIGS[config]
    out = model_cache / "transpose-functional" / network / f"{acc}__{mode}"
    out.mkdir(parents=True, exist_ok=True)
    tflite, stamp = out / f"{network}.tflite", out / "vela.version"
    data = NETS.build(generator._graph, network)
    npz = out / f"{network}_vela.npz"
    if not npz.exists() or not tflite.exists() or tflite.read_bytes() != data or \
            not stamp.exists() or stamp.read_text() != _version.__version__:
        tflite.write_bytes(data)
        proc = subprocess.run(generator.vela_command(tflite, acc, U85_SYSTEM, mode, out), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        stamp.write_text(_version.__version__)
    return load_model(npz), tflite


def transposes(model) -> list[str]:
    """The transposing mode of every operation whose OFM is written transposed."""
    modes = [c.fields.get("activation_transpose", "") for c in model.commands if c.command == "NPU_SET_OFM_PRECISION"]
    return [m[len(PREFIX):] for m in modes if m != PREFIX + "HWC"]


def random_input(tflite, network, seed):
    shape = tuple(NETS.NETWORKS[network][0])
    info = np.iinfo(NETS.input_dtype(network))
    return np.random.default_rng(seed).integers(info.min, info.max + 1, size=shape, dtype=NETS.input_dtype(network))


def run(model, config, x):
    return run_functional(model, accelerator(CONFIGS[config][0]), placement(model), [x]).outputs[0]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", NETS.NETWORKS)
def test_transposed_ofm_bit_exact(generator, model_cache, network, config):
    model, tflite = compiled(generator, model_cache, network, config)
    assert transposes(model), f"{network} on {config}: Vela wrote no OFM transposed"
    for seed in range(SEEDS):
        x = random_input(tflite, network, seed)
        want, got = reference(tflite, x), run(model, config, x)
        assert got.tobytes() == want.tobytes(), (
            f"{network} on {config}, input seed {seed}: {np.count_nonzero(got.ravel() != want.ravel())} of "
            f"{want.size} output values differ")


def test_vela_emits_every_transposing_mode(generator, model_cache):
    seen = set()
    for network in NETS.NETWORKS:
        seen.update(transposes(compiled(generator, model_cache, network, "ethos-u85-256/Sram_Only")[0]))
    assert seen == TRANSPOSING


def _with_mode(model, mode: str):
    commands = tuple(dataclasses.replace(c, fields={**c.fields, "activation_transpose": mode})
                     if c.command == "NPU_SET_OFM_PRECISION" else c for c in model.commands)
    return dataclasses.replace(model, commands=commands)


@pytest.mark.parametrize("config", ["ethos-u85-256/Sram_Only", "ethos-u85-512/Dedicated_Sram_384KB"])
def test_another_axis_order_changes_the_output(generator, model_cache, config):
    """The cube network writes WCH; naming any other order (or none) in its stream gives other
    bytes than LiteRT's, and WCH itself gives LiteRT's."""
    model, tflite = compiled(generator, model_cache, "transpose_cube", config)
    assert transposes(model) == ["WCH"]
    x = random_input(tflite, "transpose_cube", 0)
    want = reference(tflite, x).tobytes()
    assert run(_with_mode(model, PREFIX + "WCH"), config, x).tobytes() == want
    for other in sorted(TRANSPOSING - {"WCH"}) + ["HWC"]:
        assert run(_with_mode(model, PREFIX + other), config, x).tobytes() != want, other


def test_an_unnamed_transpose_value_is_one_clear_error(generator, model_cache):
    model, tflite = compiled(generator, model_cache, "transpose_cube", "ethos-u85-256/Sram_Only")
    with pytest.raises(InputError, match=r"POOL at stream offset 0x[0-9a-f]{6}: OFM activation_transpose \*\*\*\* "
                                         "names no axis order"):
        run(_with_mode(model, "****"), "ethos-u85-256/Sram_Only", random_input(tflite, "transpose_cube", 0))


def test_wch_puts_element_hwc_at_row_w_column_c_channel_h():
    values = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    for mode, where in (("WHC", lambda h, w, c: (w, h, c)), ("HCW", lambda h, w, c: (h, c, w)),
                        ("WCH", lambda h, w, c: (w, c, h)), ("CHW", lambda h, w, c: (c, h, w)),
                        ("CWH", lambda h, w, c: (c, w, h))):
        out = written(values, permutation(PREFIX + mode))
        assert out.flags.c_contiguous
        for h, w, c in np.ndindex(*values.shape):
            assert out[where(h, w, c)] == values[h, w, c], (mode, h, w, c)
    assert permutation(PREFIX + "HWC") == (0, 1, 2) and written(values, None) is values
    assert permutation("****") is None and permutation(PREFIX + "HHC") is None
