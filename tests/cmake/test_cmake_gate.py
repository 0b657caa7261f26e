"""The CMake post-link gate (weaklink/cmake/, docs/cmake.md): fixtures/cmake, a small firmware
project built with the real cmake and arm-none-eabi toolchain, runs `weaklink check` after each
link through weaklink_check(). Without the runner's fast-scratch override the U85
Dedicated_Sram image hangs on the NPU and the build fails; with it the build passes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from weaklink import toolchain

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "cmake"
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"

pytestmark = [
    pytest.mark.skipif(not toolchain.available(), reason="needs the arm-none-eabi toolchain"),
    pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (apt-get install cmake)"),
]


def _env() -> dict:
    """This checkout first on the Python path, and this interpreter's `weaklink` console script
    first on PATH: the weaklink that serves this checkout's package, which the package finds."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _cmake(*args, check_ok: bool | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(["cmake", *map(str, args)], capture_output=True, text=True, env=_env(),
                          timeout=600)
    if check_ok:
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def package_dir() -> Path:
    """`weaklink --cmake-dir`, run as `python -m weaklink.cli`: the weaklink the build runs."""
    done = subprocess.run([sys.executable, "-m", "weaklink.cli", "--cmake-dir"], capture_output=True,
                          text=True, env=_env(), timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    where = Path(done.stdout.strip())
    assert where == REPO / "weaklink" / "cmake"
    assert (where / "weaklinkConfig.cmake").is_file() and (where / "weaklinkConfigVersion.cmake").is_file()
    assert {p.name for p in where.iterdir()} == {"weaklinkConfig.cmake", "weaklinkConfigVersion.cmake",
                                                "weaklink_gate.cmake"}          # nothing written
    return where


@pytest.fixture(scope="module")
def models(cross_toolchain, tmp_path_factory) -> dict:
    from weaklink.builders import firmware, tflm

    out = tmp_path_factory.mktemp("models")
    tflite = firmware.vela_tflite("u85")
    return {"blob": firmware.model_blob("u85"),
            "tflm": tflm.model_source(tflite, "g_model", "network_model_sec", out / "model_data.c")}


def configure(build: Path, package_dir: Path, models: dict, *options) -> subprocess.CompletedProcess:
    return _cmake("-S", PROJECT, "-B", build, f"-DCMAKE_TOOLCHAIN_FILE={PROJECT / 'arm-none-eabi.cmake'}",
                  f"-Dweaklink_DIR={package_dir}", f"-DVELA_BLOB={models['blob']}", *options,
                  check_ok=True)


def build(build_dir: Path, target: str = "runner") -> tuple[int, str]:
    done = _cmake("--build", build_dir, "--target", target)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def without_override(tmp_path_factory, package_dir, models):
    """The runner built without the fast-scratch override, its findings written as SARIF."""
    where = tmp_path_factory.mktemp("without")
    sarif = where / "runner.sarif"
    configure(where / "build", package_dir, models, "-DFAST_SCRATCH_OVERRIDE=OFF",
              f"-DWEAKLINK_SARIF={sarif}")
    status, output = build(where / "build")
    return where / "build", status, output, sarif


def test_the_build_fails_without_the_override(without_override):
    build_dir, status, output, _ = without_override
    assert status != 0, output
    assert "weaklink check: runner (ethos-u85-256, Ethos_U85_SYS_DRAM_Mid, Dedicated_Sram_384KB)" in output
    assert "runner.elf: NPU HANG" in output
    # the cause: the backend's weak default, never overridden, points region 2 at 0
    assert "[fast-scratch-null]" in output
    assert "`ethosu_fast_scratch` = WEAK default from EthosUBackend.cpp (no strong definition linked)" in output
    assert "gate: failed: verdict hang (--fail-on hang,error,wrong,unknown)" in output
    assert "weaklink check failed the build: the check did not pass" in output
    # the rejected image is moved aside: the next build links and checks it again
    assert not (build_dir / "runner.elf").exists() and (build_dir / "runner.elf.rejected").is_file()
    again, output = build(build_dir)
    assert again != 0 and "gate: failed: verdict hang" in output, output


def test_the_build_passes_with_the_override(tmp_path, package_dir, models):
    configure(tmp_path / "build", package_dir, models, "-DFAST_SCRATCH_OVERRIDE=ON")
    status, output = build(tmp_path / "build")
    assert status == 0, output
    assert "runner.elf: NPU OK in 58215 cycles" in output
    assert "`ethosu_fast_scratch` = 0x31000000 (strong definition)" in output
    assert "gate: passed (--fail-on hang,error,wrong,unknown)" in output
    assert (tmp_path / "build" / "runner.elf").is_file()
    assert (tmp_path / "build" / "runner.map").is_file()        # MAP runner.map: the link's own map
    status, output = build(tmp_path / "build")                  # up to date: not checked again
    assert status == 0 and "weaklink check: runner" not in output, output
    configure(tmp_path / "build", package_dir, models, "-DWEAKLINK_SARIF=runner.sarif")
    status, output = build(tmp_path / "build")                  # the gate changed: checked again
    assert status == 0 and "weaklink check: runner" in output, output
    assert (tmp_path / "build" / "runner.sarif").is_file()      # relative: in the build directory


def test_sarif_option(without_override):
    *_, sarif = without_override
    log = json.loads(sarif.read_text())
    validator = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    assert not list(validator.iter_errors(log))
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert set(results) == {"fast-scratch-null", "npu-verdict"}
    assert results["npu-verdict"]["level"] == "error"


def test_allow_unknown(tmp_path, package_dir, models):
    """A TFLM application whose fast memory reaches ethosu_init through a pointer: check cannot
    tell, and the build fails unless ALLOW_UNKNOWN; then it passes and still says why. The
    application is defined in a subdirectory, as Zephyr's zephyr_final is: the check is a
    target of the default build, run again by the next build until it passes."""
    where = tmp_path / "build"
    configure(where, package_dir, models, f"-DTFLM_MODEL_SOURCE={models['tflm']}")
    for _ in range(2):
        status, output = build(where, "all")
        assert status != 0, output
        assert "tflm_app.elf: NPU UNKNOWN" in output
        assert "diagnosis: cannot tell: the driver replaces region 2 with ethosu_init's fast memory" in output
        assert "gate: failed: verdict unknown (--fail-on hang,error,wrong,unknown)" in output
        assert "weaklink check failed the build: the check did not pass (verdict above); the next " \
               "build checks it again" in " ".join(output.split())
        assert (where / "tflm" / "tflm_app.elf").is_file()
    configure(where, package_dir, models, "-DWEAKLINK_ALLOW_UNKNOWN=ON")
    status, output = build(where, "all")
    assert status == 0, output
    assert "tflm_app.elf: NPU UNKNOWN" in output and "diagnosis: cannot tell" in output
    assert "gate: passed: verdict unknown is allowed (--fail-on hang,error,wrong)" in output
    status, output = build(where, "all")                 # passed: not checked again
    assert status == 0 and "weaklink check: tflm_app" not in output, output
    configure(where, package_dir, models, "-DWEAKLINK_ALLOW_UNKNOWN=OFF")
    status, output = build(where, "all")                 # the gate changed: checked again
    assert status != 0 and "gate: failed: verdict unknown" in output, output


def test_weaklink_executable_overrides_the_lookup(tmp_path, package_dir, models):
    """WEAKLINK_EXECUTABLE wins over the lookup; a missing one fails find_package."""
    done = _cmake("-S", PROJECT, "-B", tmp_path / "build",
                  f"-DCMAKE_TOOLCHAIN_FILE={PROJECT / 'arm-none-eabi.cmake'}", f"-Dweaklink_DIR={package_dir}",
                  f"-DVELA_BLOB={models['blob']}", f"-DWEAKLINK_EXECUTABLE={tmp_path / 'no-weaklink'}")
    assert done.returncode != 0
    text = " ".join((done.stdout + done.stderr).split())
    assert f'no weaklink executable (from WEAKLINK_EXECUTABLE: "{tmp_path / "no-weaklink"}")' in text


def test_a_weaklink_serving_another_package_is_not_taken(tmp_path, package_dir):
    """The weaklink on PATH is asked which package it serves: a weaklink that serves another
    copy of the package (here: the same console script, run on a copy of the sources) is not
    taken, and find_package names what it found."""
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "weaklink", copy / "weaklink", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "npu", copy / "npu", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(weaklink CONFIG REQUIRED)\n")
    env = _env()
    env["PYTHONPATH"] = str(copy)
    done = subprocess.run(["cmake", "-S", tmp_path, "-B", tmp_path / "build", f"-Dweaklink_DIR={package_dir}"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode != 0
    text = " ".join((done.stdout + done.stderr).split())
    assert f"no weaklink executable serves this package ({package_dir})" in text, text
    assert f'serves "{copy / "weaklink" / "cmake"}"' in text, text


def test_weaklink_check_arguments_are_checked_at_configure(tmp_path, package_dir):
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(p C)\nfind_package(weaklink CONFIG REQUIRED)\n"
        "file(WRITE ${CMAKE_BINARY_DIR}/m.c \"int main(void){return 0;}\")\n"
        "add_executable(app ${CMAKE_BINARY_DIR}/m.c)\n"
        "weaklink_check(app ACCELERATOR ethos-u55-128 SYSTEM_CONFIG Ethos_U55_High_End_Embedded "
        "MEMORY_MODE Shared_Sram FAIL_ON hang ok)\n")
    done = _cmake("-S", tmp_path, "-B", tmp_path / "build", f"-Dweaklink_DIR={package_dir}")
    assert done.returncode != 0
    assert "FAIL_ON ok is no failing verdict" in " ".join(done.stderr.split())


@pytest.mark.parametrize("request_, compatible", [
    ("", True), ("0.1", True), ("0.1.0", True), ("0.0.9", False), ("0.2", False), ("1.0", False),
    ("0.1...0.3", True), ("0.2...0.3", False)])
def test_version_file(tmp_path, package_dir, request_, compatible):
    """find_package(weaklink <version>) against the package's version file, which holds the
    Python package's version."""
    import tomllib

    import weaklink

    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"] == weaklink.__version__
    text = (package_dir / "weaklinkConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{weaklink.__version__}")' in text
    (tmp_path / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(weaklink {request_} CONFIG)\n"
        "message(STATUS \"found=${weaklink_FOUND} version=${weaklink_VERSION}\")\n")
    done = _cmake("-S", tmp_path, "-B", tmp_path / "build", f"-Dweaklink_DIR={package_dir}", check_ok=True)
    assert (f"found=1 version={weaklink.__version__}" in done.stdout) == compatible, done.stdout + done.stderr
