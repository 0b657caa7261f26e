"""A plain install works: the wheel, installed into fresh virtual environments without and
with extras, runs every command once. Without an extra, a feature that needs it says which
extra in one line, exit 2. Needs pip's index (CI has network) or its cache."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

from weaklink import toolchain
from weaklink.builders import firmware as fixtures

REPO = Path(__file__).resolve().parents[2]
NPU_U85 = ["--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
           "--memory-mode", "Dedicated_Sram_384KB"]

pytestmark = [pytest.mark.install,
              pytest.mark.skipif(not toolchain.available(), reason="needs the arm-none-eabi toolchain")]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # A copy of the sources: setuptools writes build/ and *.egg-info beside them.
    src = out / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", ".cache", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                           str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (whl,) = out.glob("weaklink-*.whl")
    return whl


def _venv(where: Path, wheel: Path, extras: str = "") -> Path:
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    done = subprocess.run([str(py), "-m", "pip", "install", "-q", f"{wheel}{extras}"],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return where / "bin"


@pytest.fixture(scope="module")
def seeds():
    outcomes = {o.variant.name: o for o in fixtures.build()}
    weak = outcomes["weak-example-u85"]
    blob = fixtures.model_blob("u85")
    npz = blob.with_suffix("") / "tiny_vela.npz"
    t = fixtures.TARGETS["u85"]
    tflite = fixtures._model_generator().build_tflite(
        "tiny", t.accelerator, t.system_config, t.memory_mode, fixtures.cache_dir() / "models")
    return weak, blob, npz, Path(tflite), outcomes["weak-custom-u85"]


def _run(bin_dir: Path, tool: str, *args, cwd: Path, env_extra=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "WEAKLINK_FIXTURES")}
    env.update(env_extra or {})
    return subprocess.run([str(bin_dir / tool), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=900)


def _one_line_exit_2(proc, message: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_every_command_without_extras(tmp_path, wheel, seeds):
    weak, blob, npz, tflite, other = seeds
    bin_dir = _venv(tmp_path / "plain", wheel)
    elf, map_ = weak.cwd / weak.elf, weak.cwd / weak.map
    link = _run(bin_dir, "weaklink", "link", *weak.ld_args, cwd=weak.cwd)
    assert link.returncode == 0 and "link would succeed" in link.stdout, link.stderr
    assert _run(bin_dir, "weaklink", "analyze", "--json", elf, "--map", map_, cwd=tmp_path).returncode == 0
    check = _run(bin_dir, "weaklink", "check", elf, *NPU_U85, cwd=tmp_path)
    assert check.returncode == 0 and "NPU OK" in check.stdout, check.stderr
    diff = _run(bin_dir, "weaklink", "diff", other.cwd / other.elf, elf, cwd=tmp_path)
    assert diff.returncode in (0, 1) and diff.stdout and not diff.stderr, diff.stderr
    for model in (blob, npz, tflite):
        decode = _run(bin_dir, "npu", "decode", model, cwd=tmp_path)
        assert decode.returncode == 0 and "NPU_OP_STOP" in decode.stdout, decode.stderr
    run = _run(bin_dir, "npu", "run", blob, *NPU_U85, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    # --functional decodes the mlw weight streams with the emulator's own decoder: no Vela
    from npu.read.model import load_model
    (io,) = load_model(npz).inputs
    x = tmp_path / "x.npy"
    np.save(x, np.ones([d for d in io.shape if d], dtype=np.int8))
    functional = _run(bin_dir, "npu", "run", npz, *NPU_U85, "--functional", "--input", x,
                      "--outputs", tmp_path / "out", cwd=tmp_path)
    assert functional.returncode == 0 and list((tmp_path / "out").iterdir()), functional.stderr

    # the CMake package ships in the wheel; --cmake-dir writes nothing into it, and the package
    # finds the console script installed beside it, with no weaklink on PATH
    cmake_dir = _run(bin_dir, "weaklink", "--cmake-dir", cwd=tmp_path)
    where = Path(cmake_dir.stdout.strip())
    assert cmake_dir.returncode == 0 and where.is_relative_to(tmp_path / "plain"), cmake_dir.stderr
    files = {"weaklinkConfig.cmake", "weaklinkConfigVersion.cmake", "weaklink_gate.cmake"}
    assert {p.name for p in where.iterdir()} == files and not cmake_dir.stderr
    if shutil.which("cmake"):
        project = tmp_path / "cmake-project"
        project.mkdir()
        (project / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(weaklink CONFIG REQUIRED)\n"
            "message(STATUS \"weaklink command: ${WEAKLINK_COMMAND}\")\n")
        cmake = shutil.which("cmake")
        done = subprocess.run([cmake, "-S", project, "-B", project / "build", f"-Dweaklink_DIR={where}"],
                              capture_output=True, text=True, timeout=300,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"weaklink command: {bin_dir / 'weaklink'}" in done.stdout
        assert {p.name for p in where.iterdir()} == files

    plot = "--plot needs matplotlib: pip install 'weaklink[plot]'"
    _one_line_exit_2(_run(bin_dir, "weaklink", "analyze", elf, "--plot", tmp_path / "a.png", cwd=tmp_path), plot)
    _one_line_exit_2(_run(bin_dir, "weaklink", "check", elf, *NPU_U85, "--plot", tmp_path / "c.png",
                          cwd=tmp_path), plot)
    _one_line_exit_2(_run(bin_dir, "npu", "run", blob, *NPU_U85, "--plot", tmp_path / "n.png", cwd=tmp_path), plot)
    assert not list(tmp_path.glob("*.png"))
    _one_line_exit_2(_run(bin_dir, "weaklink", "demo", cwd=tmp_path, env_extra={"XDG_CACHE_HOME": str(tmp_path)}),
                     "weaklink demo needs ethos-u-vela: pip install 'weaklink[demo]'")
    _one_line_exit_2(_run(bin_dir, "weaklink", "demo", "--fixtures", tmp_path / "nowhere", cwd=tmp_path),
                     "no fixture sources here")


def test_demo_and_plots_with_extras(tmp_path, wheel, seeds):
    weak = seeds[0]
    bin_dir = _venv(tmp_path / "extras", wheel, "[demo]")
    elf = weak.cwd / weak.elf
    analyze = _run(bin_dir, "weaklink", "analyze", elf, "--plot", tmp_path / "a.png", cwd=tmp_path)
    assert analyze.returncode == 0 and (tmp_path / "a.png").stat().st_size > 0, analyze.stderr
    cache = tmp_path / "cache"
    demo = _run(bin_dir, "weaklink", "demo", "--json", "--cache", cache, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert '"backend": "weak"' in demo.stdout
    assert (cache / "fixtures").is_dir()          # the builds went where we said, not into site-packages
