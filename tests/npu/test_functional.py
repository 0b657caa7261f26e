"""Functional Ethos-U55/U65 emulation is bit-exact against LiteRT (the TFLite reference
kernels) on real Vela-compiled streams: one network per operator type, the fixture
networks, and random int8 networks, for ethos-u55-128 and ethos-u65-256, several random
inputs each. Every output byte must be equal; there is no tolerance."""
from __future__ import annotations

import numpy as np
import pytest

from npu.functional import run_functional
from npu.hw import accelerator
from npu.read.model import load_model

interpreter = pytest.importorskip("ai_edge_litert.interpreter")

CONFIGS = {"ethos-u55-128": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
           "ethos-u65-256": ("Ethos_U65_High_End", "Dedicated_Sram")}
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


def compiled(generator, model_cache, network, acc):
    vdir = generator.compile_network(network, acc, *CONFIGS[acc], model_cache)
    return load_model(vdir / f"{network}_vela.npz"), model_cache / f"{network}.tflite"


def placement(model) -> dict:
    return {0: (0x10000000, 0), 1: (0x20000000, model.region_sizes[1]),
            2: (0x30000000, model.region_sizes.get(2, 0))}


def assert_bit_exact(generator, model_cache, network, acc):
    model, tflite = compiled(generator, model_cache, network, acc)
    shape = input_shape(tflite)
    for seed in range(INPUTS_PER_NETWORK):
        x = np.random.default_rng(seed).integers(-128, 128, size=shape, dtype=np.int8)
        want = reference(tflite, x)
        got = run_functional(model, accelerator(acc), placement(model), [x]).outputs[0]
        assert got.tobytes() == want.tobytes(), (
            f"{network} on {acc}, input seed {seed}: {np.count_nonzero(got.ravel() != want.ravel())} of "
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


@pytest.mark.parametrize("acc", CONFIGS)
@pytest.mark.parametrize("network", OPERATOR_NETWORKS)
def test_operator_bit_exact(generator, model_cache, network, acc):
    assert_bit_exact(generator, model_cache, network, acc)


@pytest.mark.parametrize("acc", CONFIGS)
@pytest.mark.parametrize("network", ["tiny", "convpool", "residual", "large", "deep"])
def test_fixture_network_bit_exact(generator, model_cache, network, acc):
    assert_bit_exact(generator, model_cache, network, acc)


@pytest.mark.parametrize("acc", CONFIGS)
@pytest.mark.parametrize("network", RANDOM_NETWORKS)
def test_random_network_bit_exact(generator, model_cache, network, acc):
    assert_bit_exact(generator, model_cache, network, acc)


def test_outputs_are_not_saturated(generator, model_cache):
    """The operator networks' outputs spread over the int8 range, so equality means something."""
    model, tflite = compiled(generator, model_cache, "op_conv", "ethos-u55-128")
    x = np.random.default_rng(0).integers(-128, 128, size=input_shape(tflite), dtype=np.int8)
    out = run_functional(model, accelerator("ethos-u55-128"), placement(model), [x]).outputs[0]
    assert len(np.unique(out)) > 100 and np.isin(out, [-128, 127]).mean() < 0.05


def test_a_wrong_weight_changes_the_output(generator, model_cache):
    """The comparison can fail: flip one byte of the weight stream and the outputs differ."""
    import dataclasses
    model, tflite = compiled(generator, model_cache, "op_conv", "ethos-u55-128")
    x = np.random.default_rng(0).integers(-128, 128, size=input_shape(tflite), dtype=np.int8)
    weights = bytearray(model.weight_data)
    weights[len(weights) - 40] ^= 0x10
    broken = dataclasses.replace(model, weight_data=bytes(weights))
    got = run_functional(broken, accelerator("ethos-u55-128"), placement(broken), [x]).outputs[0]
    assert got.tobytes() != reference(tflite, x).tobytes()


def test_an_unmodelled_elementwise_mode_is_one_clear_error(generator, model_cache):
    import dataclasses
    from npu.errors import InputError
    model, tflite = compiled(generator, model_cache, "op_add", "ethos-u55-128")
    commands = tuple(dataclasses.replace(c, fields={"elementwise_mode": "ELEMENTWISE_MODE_SHR"})
                     if c.command == "NPU_OP_ELEMENTWISE" else c for c in model.commands)
    x = np.zeros(input_shape(tflite), dtype=np.int8)
    with pytest.raises(InputError, match="elementwise mode ELEMENTWISE_MODE_SHR is not modelled"):
        run_functional(dataclasses.replace(model, commands=commands), accelerator("ethos-u55-128"),
                       placement(model), [x])
