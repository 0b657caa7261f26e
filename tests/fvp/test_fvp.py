"""`weaklink fvp`: the Corstone-300 FVP's command line on QEMU. Fixtures of our own
(fixtures/firmware/fvp) built with the real cross toolchain, run on the real qemu-system-arm,
through the CLI as a process (the frameworks' scripts call it so) and through the shims by
scripts shaped as TFLM's and ExecuTorch's (tests/fvp/scripts)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fvp_fixtures import ROOT, build  # noqa: E402

from weaklink.run.qemu import QEMU  # noqa: E402

SCRIPTS = Path(__file__).resolve().parent / "scripts"
TIME_LIMIT = "Info: Simulation is stopping. Reason: CPU time has been exceeded."
STOPPED = "Info: /OSCI/SystemC: Simulation stopped by user."
# TFLM's command line (test_with_arm_corstone_300.sh), as its unquoted expansion passes it
TFLM = ["-C", "ethosu.num_macs=256", "-C", "mps3_board.visualisation.disable-visualisation=1",
        "-C", "mps3_board.telnetterminal0.start_telnet=0", "-C", 'mps3_board.uart0.out_file="-"',
        "-C", "mps3_board.uart0.unbuffered_output=1", "-C", "mps3_board.uart0.shutdown_on_eot=1", "--stat"]


def env(path: str | None = None) -> dict:
    e = dict(os.environ, PYTHONPATH=str(ROOT))
    if path:
        e["PATH"] = f"{path}{os.pathsep}{e['PATH']}"
    return e


def fvp(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "weaklink.cli", "fvp", *map(str, args)], capture_output=True,
                          text=True, env=env(), cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def qemu():
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} not installed (apt-get install qemu-system-arm)")


@pytest.fixture(scope="module")
def images(cross_toolchain, qemu, tmp_path_factory):
    root = tmp_path_factory.mktemp("fvp-fixtures")
    return {name: build(root, name) for name in ("eot", "semihost_io", "data", "uarts")}


@pytest.fixture(scope="module")
def shims(tmp_path_factory):
    where = tmp_path_factory.mktemp("shims")
    done = fvp("--install-shims", where)
    assert done.returncode == 0, done.stderr
    return where


def test_eot_ends_the_run_with_the_fvp_stop_line_and_stat_block(images):
    begun = time.monotonic()
    done = fvp(*TFLM, "--timelimit", 60, images["eot"])
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = done.stdout
    assert out.startswith("fvp fixture: all tests passed\nApplication exit code: 0.\n")
    assert "\x04" not in out and TIME_LIMIT not in out and STOPPED in out
    stat = out[out.index("--- FVP_MPS3_Corstone_SSE_300 statistics: "):].splitlines()
    assert [line.split(":")[0].rstrip() for line in stat[1:8]] == [
        "Simulated time", "User time", "System time", "Wall time", "Performance index", "cpu0", "ethosu"]
    assert "unknown" in stat[1] and stat[-1] == "-" * 79
    assert time.monotonic() - begun < 30                # at the EOT, not at the time limit


def test_without_shutdown_on_eot_the_run_goes_on_to_the_time_limit(images):
    begun = time.monotonic()
    done = fvp("-C", "mps3_board.uart0.out_file=-", "--timelimit", 2, "-a", images["eot"])
    assert done.returncode == 0, done.stderr
    assert "Application exit code: 0.\n\x04" in done.stdout        # the byte passes through
    assert done.stdout.rstrip().endswith(f"{TIME_LIMIT}\n\n{STOPPED}")
    assert time.monotonic() - begun >= 2


def test_uart_out_file_takes_the_uart_off_stdout(images, tmp_path):
    log = tmp_path / "uart.txt"
    done = fvp("-C", f"mps3_board.uart0.out_file={log}", "-C", "mps3_board.uart0.shutdown_on_eot=1",
               images["eot"])
    assert done.returncode == 0, done.stderr
    assert log.read_text() == "fvp fixture: all tests passed\nApplication exit code: 0.\n"
    assert "all tests passed" not in done.stdout and STOPPED in done.stdout


# Zephyr's run_armfvp target (zephyr boards/arm/mps3_an547/board.cmake, ARMFVP_FLAGS)
ZEPHYR = ["-C", "mps3_board.uart0.out_file=-", "-C", "mps3_board.uart0.unbuffered_output=1",
          "-C", "mps3_board.uart1.out_file=-", "-C", "mps3_board.uart1.unbuffered_output=1",
          "-C", "mps3_board.uart2.out_file=-", "-C", "mps3_board.uart2.unbuffered_output=1",
          "-C", "mps3_board.visualisation.disable-visualisation=1"]


def test_zephyrs_run_armfvp_line_with_uart1_and_uart2_on_stdout(images):
    done = fvp(*ZEPHYR, "-C", "mps3_board.uart0.shutdown_on_eot=1", "-a", images["uarts"])
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert {"uart0: first", "uart1: second", "uart2: third", "Application exit code: 0."} <= set(lines)
    assert lines[-1] == STOPPED


def test_uart2_into_a_file_and_uart1_nowhere(images, tmp_path):
    log = tmp_path / "uart2.txt"
    done = fvp("-C", f"mps3_board.uart2.out_file={log}", "-C", "mps3_board.uart0.shutdown_on_eot=1",
               images["uarts"])
    assert done.returncode == 0, done.stderr
    assert log.read_text() == "uart2: third\n"
    assert "uart0: first" in done.stdout and "uart1" not in done.stdout and "uart2" not in done.stdout


def test_semihosting_file_io_with_the_cwd_and_command_line(images, tmp_path):
    work = tmp_path / "bundle"
    work.mkdir()
    (work / "in.bin").write_bytes(bytes(range(40, 90)))
    # ExecuTorch's runner_utils.py passes its values quoted, as one argv element each
    done = fvp("-C", "ethosu.num_macs=128", "-C", "mps3_board.uart0.out_file='-'",
               "-C", "cpu0.semihosting-enable=1", "-C", "cpu0.semihosting-stack_base=0",
               "-C", "cpu0.semihosting-heap_limit=0", "-C", f"cpu0.semihosting-cwd={work}",
               "-C", "ethosu.extra_args='--fast'",
               "-C", "cpu0.semihosting-cmd_line='executor_runner -m program.bpte -i in.bin -o out.bin'",
               "-a", images["semihost_io"], "--timelimit", 60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "cmdline: executor_runner -m program.bpte -i in.bin -o out.bin\n" in out
    assert "read 50 bytes" in out and ", at 2: 2a 2b\n" in out           # SYS_FLEN, SYS_READ, SYS_SEEK
    assert (work / "out.bin").read_bytes() == bytes(range(89, 39, -1))  # SYS_OPEN wb, SYS_WRITE
    # SYS_HEAPINFO as the parameters say (QEMU's own answer puts the stack at the top of ITCM)
    assert "heapinfo 0x00000000 0x00000000 0x00000000 0x00000000\n" in out
    assert "Test_result: PASS" in out and STOPPED in out


def test_semihosting_console_handles_print_on_stdout(images, tmp_path):
    # newlib's rdimon writes stdout and stderr through SYS_OPEN(":tt") handles; an FVP prints
    # both on its terminal, and ExecuTorch's runner logs every line through stderr
    (tmp_path / "in.bin").write_bytes(b"abcd")
    done = fvp("-C", "mps3_board.uart0.out_file=-", "-C", f"cpu0.semihosting-cwd={tmp_path}",
               "-C", "cpu0.semihosting-cmd_line=r -i in.bin -o o.bin", images["semihost_io"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tt stdout: written\n" in done.stdout and "tt stderr: written\n" in done.stdout
    assert "Test_result: PASS" in done.stdout and "qemu-system-arm:" not in done.stdout


def test_heapinfo_is_qemus_without_the_fvp_parameters(images, tmp_path):
    (tmp_path / "in.bin").write_bytes(b"abcd")
    done = fvp("-C", f"cpu0.semihosting-cwd={tmp_path}", "-C", "cpu0.semihosting-cmd_line=r -i in.bin -o o.bin",
               images["semihost_io"])
    line = next(x for x in done.stdout.splitlines() if x.startswith("heapinfo"))
    assert line != "heapinfo 0x00000000 0x00000000 0x00000000 0x00000000"


def test_data_file_is_in_memory_before_the_start(images, tmp_path):
    blob = tmp_path / "model.pte"
    blob.write_bytes(bytes(range(0xA0, 0xB0)) + b"rest")
    done = fvp("--data", f"{blob}@0x60100000", "--timelimit", 60, images["data"])
    assert done.returncode == 0, done.stderr
    assert "data at 0x60100000: a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af\n" in done.stdout
    done = fvp("--data", f"cpu0={blob}@0x60100000", images["data"])      # the FVP's INST= form
    assert "data at 0x60100000: a0 a1" in done.stdout
    done = fvp(images["data"])
    assert "data at 0x60100000: 00 00" in done.stdout


@pytest.mark.parametrize("argv, message", [
    (["-C", "mps3_board.uart3.out_file=-"], "-C mps3_board.uart3.out_file: not modelled by weaklink fvp"),
    (["-C", "cpu0.CFGITCMSZ=4"], "-C cpu0.CFGITCMSZ: not modelled by weaklink fvp: QEMU's mps3-an547 has 512 KB"),
    (["-C", "ethosu.num_macs=96"], "-C ethosu.num_macs=96: ethos-u55 has 32, 64, 128, 256 MACs"),
    (["-C", "ethosu.extra_args=--stats-file x"], "--stats-file: not modelled"),
    (["-C", "mps3_board.uart0.shutdown_on_eot=yes"], "expected 0, 1, true or false"),
    (["--data", "missing.bin@0x60000000"], "missing.bin: no such file"),
    (["--data", "fw.elf@S:0x60000000"], "memory space S: not modelled"),
    (["--cyclelimit", "100"], "unrecognized arguments: --cyclelimit"),
])
def test_what_is_not_modelled_is_one_line_exit_2(argv, message):
    done = fvp(*argv, "fw.elf")
    assert done.returncode == 2 and done.stdout == ""
    assert message in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def test_list_params_is_the_table_as_data():
    done = fvp("--list-params", "--json")
    data = json.loads(done.stdout)
    assert data["schema_version"] == 1 and data["default_accelerator"] == "ethos-u55-128"
    effects = {p["name"]: p["effect"] for p in data["params"]}
    for name in ("ethosu.num_macs", "mps3_board.uart0.shutdown_on_eot", "cpu0.semihosting-cmd_line"):
        assert effects[name] == "honoured"
    assert effects["mps3_board.telnetterminal0.start_telnet"] == "accepted"
    u65 = json.loads(fvp("--list-params", "--json", "--model", "FVP_Corstone_SSE-300_Ethos-U65").stdout)
    assert u65["default_accelerator"] == "ethos-u65-256"
    table = fvp("--list-params").stdout
    assert "mps3_board.uart0.out_file" in table and "honoured" in table


def test_a_pmu_trace_it_cannot_write_is_said_in_one_line(images, tmp_path):
    done = fvp("-C", "ethosu.extra_args=--fast --pmu-trace trace.json", "-C", "mps3_board.uart0.shutdown_on_eot=1",
               images["eot"], cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr.startswith("weaklink fvp: no PMU trace written to trace.json") and done.stderr.count("\n") == 1
    assert not (tmp_path / "trace.json").exists()


def shaped(script: str, *args, shims: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPTS / script), *map(str, args)], capture_output=True, text=True,
                          env=env(str(shims)), cwd=cwd, timeout=300)


def test_shims_are_the_fvps_on_path(shims):
    for model in ("FVP_Corstone_SSE-300_Ethos-U55", "FVP_Corstone_SSE-300_Ethos-U65"):
        assert os.access(shims / model, os.X_OK)
        found = subprocess.run(["sh", "-c", f"command -v {model}"], capture_output=True, text=True, env=env(str(shims)))
        assert found.stdout.strip() == str(shims / model)
    done = subprocess.run([str(shims / "FVP_Corstone_SSE-300_Ethos-U65"), "--list-params", "--json"],
                          capture_output=True, text=True, env=env())
    assert json.loads(done.stdout)["default_accelerator"] == "ethos-u65-256"


def test_tflm_shaped_script_passes_and_fails_on_its_pass_string(images, shims, tmp_path):
    done = shaped("tflm_shaped.sh", images["eot"], "all tests passed", tmp_path / "log.txt", shims=shims, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.endswith(f"{images['eot']}: PASS\n"), done.stdout + done.stderr
    assert "statistics:" in (tmp_path / "log.txt").read_text()
    done = shaped("tflm_shaped.sh", images["data"], "all tests passed", tmp_path / "log.txt", shims=shims, cwd=tmp_path)
    assert done.returncode == 1 and "FAIL - 'all tests passed' not found in logs." in done.stdout


def test_tflm_shaped_script_on_an_npu_image(cross_toolchain, qemu, shims, tmp_path):
    """A runner that invokes the NPU (fixtures/firmware/runners) through the shim: its job runs on
    npu/, and the PMU cycle count it reads is the emulator's."""
    from weaklink.builders import firmware as fixtures

    outcome = fixtures.build([fixtures.Variant("weak", "example", "u55")])[0]
    done = subprocess.run(["bash", str(SCRIPTS / "tflm_shaped.sh"), str(outcome.elf), "Application exit code: 0.",
                           str(tmp_path / "log.txt")], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env=dict(env(str(shims)), MACS="128"))
    assert done.returncode == 0, done.stdout + done.stderr
    log = (tmp_path / "log.txt").read_text()
    cycles = int(log.split("NPU cycles (PMU) ")[1].split()[0])
    assert cycles > 0 and f"ethosu                                  : {cycles} cycles in 1 jobs" in log


def test_executorch_shaped_script_bundled_program_over_semihosting(images, shims, tmp_path):
    (tmp_path / "fvp_dummy_input.bin").write_bytes(b"\0\0\0\0")
    done = shaped("executorch_shaped.sh", f"--elf={images['semihost_io']}", f"--bundle-cwd={tmp_path}",
                  "--cmd-line=executor_runner -m program.bpte -i fvp_dummy_input.bin -o out", "--timeout=60",
                  shims=shims, cwd=tmp_path)
    assert done.returncode == 0 and "Bundled I/O check PASSED" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "out").read_bytes() == b"\0\0\0\0"


def test_executorch_shaped_script_with_data_and_its_problem_lines(images, shims, tmp_path):
    blob = tmp_path / "program.pte"
    blob.write_bytes(bytes(range(16)))
    done = shaped("executorch_shaped.sh", f"--elf={images['data']}", f"--data={blob}@0x60100000", "--timeout=60",
                  shims=shims, cwd=tmp_path)
    assert done.returncode == 0 and "No problems found!" in done.stdout, done.stdout + done.stderr
    assert "data at 0x60100000: 00 01 02" in done.stdout
    # the U65 model's shim, as the script picks it for an ethos-u65 target
    done = shaped("executorch_shaped.sh", f"--elf={images['data']}", "--timeout=60", "--target=ethos-u65-256",
                  shims=shims, cwd=tmp_path)
    assert done.returncode == 0 and "No problems found!" in done.stdout, done.stdout


def test_executorch_shaped_script_counts_the_time_limit_and_a_fault_as_errors(cross_toolchain, qemu, shims, tmp_path):
    from firmware_src import build_firmware

    spin = build_firmware(tmp_path / "spin", 'void say(const char *); int main(void) { say("working\\n"); '
                                             'for (;;) { } return 0; }', name="spin")
    done = shaped("executorch_shaped.sh", f"--elf={spin}", "--timeout=2", shims=shims, cwd=tmp_path)
    assert done.returncode == 1 and f"{TIME_LIMIT}\nFound ERROR" in done.stdout, done.stdout
    trap = build_firmware(tmp_path / "trap", 'void say(const char *); int main(void) { say("about to crash\\n"); '
                                             '__builtin_trap(); return 0; }', name="trap")
    done = shaped("executorch_shaped.sh", f"--elf={trap}", "--timeout=60", shims=shims, cwd=tmp_path)
    assert done.returncode == 1 and "\nError: weaklink fvp: the firmware crashed" in done.stdout, done.stdout
    assert "Found ERROR" in done.stdout
