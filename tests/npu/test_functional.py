"""Functional Ethos-U emulation is bit-exact against LiteRT (the TFLite reference kernels) on
real Vela-compiled streams: one network per operator type, the fixture networks, and random
int8 networks, for ethos-u55-128 and ethos-u65-256, and for ethos-u85-256 and ethos-u85-512 (two
weight streams) in Dedicated_Sram_384KB and Sram_Only, several random inputs each. Every output
byte must be equal; there is no tolerance."""
from __future__ import annotations

import numpy as np
import pytest

from npu.functional import run_functional
from npu.hw import accelerator
from npu.read.model import load_model

interpreter = pytest.importorskip("ai_edge_litert.interpreter")

U85_SYSTEM = "Ethos_U85_SYS_DRAM_Mid"
# config id -> (accelerator, system config, memory mode)
CONFIGS = {"ethos-u55-128": ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
           "ethos-u65-256": ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram"),
           **{f"{acc}/{mode}": (acc, U85_SYSTEM, mode) for acc in ("ethos-u85-256", "ethos-u85-512")
              for mode in ("Dedicated_Sram_384KB", "Sram_Only")}}
INPUTS_PER_NETWORK = 3


def reference(tflite, x: np.ndarray) -> np.ndarray:
    """LiteRT with its reference kernels: the kernels TFLite Micro runs on a Cortex-M."""
    it = interpreter.Interpreter(model_path=str(tflite),
                                 experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], x.reshape(d["shape"]))
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def input_shape(tflite) -> tuple:
    it = interpreter.Interpreter(model_path=str(tflite))
    return tuple(it.get_input_details()[0]["shape"])


def compiled(generator, model_cache, network, config):
    vdir = generator.compile_network(network, *CONFIGS[config], model_cache)
    return load_model(vdir / f"{network}_vela.npz"), model_cache / f"{network}.tflite"


def placement(model) -> dict:
    return {0: (0x10000000, 0), 1: (0x20000000, model.region_sizes[1]),
            2: (0x30000000, model.region_sizes.get(2, 0))}


def assert_bit_exact(generator, model_cache, network, config):
    model, tflite = compiled(generator, model_cache, network, config)
    shape = input_shape(tflite)
    for seed in range(INPUTS_PER_NETWORK):
        x = np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)
        want = reference(tflite, x)
        got = run_functional(model, accelerator(CONFIGS[config][0]), placement(model), [x]).outputs[0]
        assert got.tobytes() == want.tobytes(), (
            f"{network} on {config}, input seed {seed}: {np.count_nonzero(got.ravel() != want.ravel())} of "
            f"{want.size} output bytes differ")


def _functional_networks(prefix):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "fixtures/models/functional_nets.py"
    spec = importlib.util.spec_from_file_location("functional_nets_list", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [n for n in module.NETWORKS if n.startswith(prefix)]


OPERATOR_NETWORKS = _functional_networks("op_")
RANDOM_NETWORKS = _functional_networks("random")


def test_enough_random_networks():
    assert len(RANDOM_NETWORKS) >= 20


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", OPERATOR_NETWORKS)
def test_operator_bit_exact(generator, model_cache, network, config):
    assert_bit_exact(generator, model_cache, network, config)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", ["tiny", "convpool", "residual", "large", "deep"])
def test_fixture_network_bit_exact(generator, model_cache, network, config):
    assert_bit_exact(generator, model_cache, network, config)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("network", RANDOM_NETWORKS)
def test_random_network_bit_exact(generator, model_cache, network, config):
    assert_bit_exact(generator, model_cache, network, config)


@pytest.mark.parametrize("network", [n for n in OPERATOR_NETWORKS if n.startswith("op_conv") and "relu" not in n])
def test_outputs_are_not_saturated(generator, model_cache, network):
    """The convolution networks' outputs (no ReLU) spread over the int8 range, so equality means
    something; on U85 they cover the weight formats (default, fast with 2-bit and 4-bit tables or
    raw bytes, 2:4 sparse)."""
    model, tflite = compiled(generator, model_cache, network, "ethos-u85-256/Sram_Only")
    x = np.random.default_rng(0).integers(-128, 128, size=input_shape(tflite), dtype=np.int8)
    out = run_functional(model, accelerator("ethos-u85-256"), placement(model), [x]).outputs[0]
    assert len(np.unique(out)) > 100 and np.isin(out, [-128, 127]).mean() < 0.05


@pytest.mark.parametrize("config", ["ethos-u55-128", "ethos-u85-256/Sram_Only", "ethos-u85-512/Sram_Only"])
def test_a_wrong_weight_changes_the_output(generator, model_cache, config):
    """The comparison can fail: flip a few bytes of the weight stream and the outputs differ
    (eight in a row: some padding values multiply nothing)."""
    import dataclasses
    model, tflite = compiled(generator, model_cache, "op_conv", config)
    x = np.random.default_rng(0).integers(-128, 128, size=input_shape(tflite), dtype=np.int8)
    weights = bytearray(model.weight_data)
    middle = len(model.weight_data.rstrip(b"\0")) // 2     # of the bytes before region 0's zero tail
    for i in range(middle, middle + 8):
        weights[i] ^= 0x10
    broken = dataclasses.replace(model, weight_data=bytes(weights))
    got = run_functional(broken, accelerator(CONFIGS[config][0]), placement(broken), [x]).outputs[0]
    assert got.tobytes() != reference(tflite, x).tobytes()


@pytest.mark.parametrize("config", ["ethos-u55-128", "ethos-u85-256/Sram_Only"])
def test_an_unmodelled_elementwise_mode_is_one_clear_error(generator, model_cache, config):
    import dataclasses
    from npu.errors import InputError
    model, tflite = compiled(generator, model_cache, "op_add", config)
    commands = tuple(dataclasses.replace(c, fields={"elementwise_mode": "ELEMENTWISE_MODE_LRELU"})
                     if c.command == "NPU_OP_ELEMENTWISE" else c for c in model.commands)
    x = np.zeros(input_shape(tflite), dtype=np.int8)
    with pytest.raises(InputError, match="elementwise mode ELEMENTWISE_MODE_LRELU is not modelled"):
        run_functional(dataclasses.replace(model, commands=commands), accelerator(CONFIGS[config][0]),
                       placement(model), [x])
