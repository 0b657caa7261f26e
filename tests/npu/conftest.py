"""Fixtures for the npu tests: every fixture network compiled by Vela, once per session.

Outputs go to $WEAKLINK_CACHE/npu-models (or <repo>/.cache/npu-models), never into git;
the generator's stamps make a second session reuse them.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _generator():
    spec = importlib.util.spec_from_file_location("fixture_models_generate", REPO / "fixtures/models/generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Compiled:
    network: str
    accelerator: str
    system_config: str
    memory_mode: str
    vela_dir: Path
    blob: Path

    @property
    def id(self) -> str:
        return f"{self.network}-{self.accelerator}-{self.memory_mode}"

    @property
    def npz(self) -> Path:
        return self.vela_dir / f"{self.network}_vela.npz"

    @property
    def vela_log(self) -> str:
        return (self.vela_dir / "vela.log").read_text()

    @property
    def config(self) -> dict:
        return {"accelerator": self.accelerator, "system_config": self.system_config,
                "memory_mode": self.memory_mode}


@pytest.fixture(scope="session")
def generator():
    return _generator()


@pytest.fixture(scope="session")
def model_cache() -> Path:
    root = Path(os.environ.get("WEAKLINK_CACHE", REPO / ".cache"))
    path = root / "npu-models"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def compiled(generator, model_cache) -> list[Compiled]:
    out = []
    for network in generator.NETWORKS:
        for cfg in generator.CONFIGS:
            blob = generator.build_blob(network, *cfg, model_cache)
            out.append(Compiled(network, *cfg, model_cache / generator.config_tag(network, *cfg), blob))
    return out


@pytest.fixture(scope="session")
def u85_tiny(compiled) -> Compiled:
    return next(c for c in compiled if c.network == "tiny" and c.memory_mode == "Dedicated_Sram_384KB")


@pytest.fixture(scope="session")
def vela_tflite(generator, model_cache) -> Path:
    """The tiny network compiled to Vela's .tflite output (the ethos-u custom operator)."""
    out = model_cache / "tflite-output"
    target = out / "tiny_vela.tflite"
    generator.compile_network("tiny", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram_384KB", model_cache)
    if not target.exists():
        cmd = generator.vela_command(model_cache / "tiny.tflite", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid",
                                     "Dedicated_Sram_384KB", out)
        cmd[cmd.index("raw")] = "tflite"
        subprocess.run(cmd, check=True, capture_output=True)
    return target
