"""The npuapp fixture (fixtures/firmware/npuapp): an application shaped like a real NPU firmware,
linked by arm-none-eabi-gcc with newlib, --gc-sections and the Corstone-300 script. The board
library's cache-hook overrides are never extracted; analyze says so, and the link model run on
the real driver line agrees with ld."""
from __future__ import annotations

import json

import pytest
from snippets import needs_toolchain

import weaklink.resolve
from weaklink.builders import firmware as fixtures
from weaklink.cli import main
from weaklink.resolve.gnu.oracle import differences, recorded_run

HOOKS = ("ethosu_flush_dcache", "ethosu_invalidate_dcache")


@pytest.fixture(scope="module")
def app():
    if not fixtures.toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed")
    return fixtures.build_npuapp()


@needs_toolchain
def test_real_link_succeeds_only_thanks_to_gc(app):
    assert app.returncode == 0, app.stderr
    res = weaklink.resolve.link_driver(list(app.argv), cwd=app.cwd)
    assert res.ok
    assert any(c.section == ".text.npu_selftest" for c in res.collected)
    no_gc = [a for a in app.argv if a != "-Wl,--gc-sections"]
    bad = weaklink.resolve.link_driver(no_gc, cwd=app.cwd)
    assert [e.symbol for e in bad.errors] == ["board_npu_power_cycle"]


@needs_toolchain
def test_model_agrees_with_ld_on_the_real_driver_line(app, tmp_path):
    map_ = tmp_path / "agree.map"
    import subprocess
    proc = subprocess.run([*app.argv, "-o", str(tmp_path / "x.elf"),
                           f"-Wl,-Map,{map_},--cref,--no-demangle,--print-gc-sections"],
                          cwd=app.cwd, capture_output=True, text=True)
    real = recorded_run(proc.returncode, proc.stderr, map_)
    model = weaklink.resolve.link_driver(list(app.argv), cwd=app.cwd, cref=True)
    assert differences(model, real, args=list(model.ld_args)) == []
    for hook in HOOKS:
        assert model.symbols[hook].binding == "weak"
        assert model.symbols[hook].file == "libnpudrv.a(hooks.o)" and model.symbols[hook].kept


@needs_toolchain
def test_analyze_reports_both_overrides_not_extracted(app, capsys, monkeypatch):
    monkeypatch.chdir(app.cwd)
    main(["analyze", "--json", str(app.elf), "--map", str(app.map)])
    doc = json.loads(capsys.readouterr().out)
    found = {(f["rule"], f["symbol"]) for f in doc["findings"]}
    for hook in HOOKS:
        assert ("override-not-extracted", hook) in found


@needs_toolchain
def test_cli_link_on_the_driver_line_answers_why_not(app, capsys, monkeypatch):
    monkeypatch.chdir(app.cwd)
    code = main(["link", "--why-not", HOOKS[0], "--", *app.argv])
    out = capsys.readouterr().out
    assert code == 0
    assert (f"why not {HOOKS[0]} from libboard.a(cache.o): blocked by an earlier weak "
            "definition in libnpudrv.a(hooks.o) [blocked-by-weak]") in out
    assert out.rstrip().endswith("link would succeed")


def _readme_blocks():
    import re
    import shlex

    from weaklink.cachedir import REPO
    text = (REPO / "README.md").read_text()
    part = text.split("## Real links: `weaklink link -- arm-none-eabi-gcc …`", 1)[1]
    sh, out = re.findall(r"```(?:sh)?\n(.*?)```", part, re.S)[:2]
    return shlex.split(sh.replace("\\\n", " ")), out, part


@needs_toolchain
def test_readme_driver_example_is_this_output(app, capsys, monkeypatch):
    """The README's `weaklink link -- arm-none-eabi-gcc …` example, byte for byte."""
    from weaklink.builders import firmware as fx
    argv, expected, part = _readme_blocks()
    assert argv[:2] == ["weaklink", "link"]
    argv = [str(fx._npuapp() / "npuapp.ld") if a.endswith("npuapp.ld") else a for a in argv]
    monkeypatch.chdir(app.cwd)
    code = main(argv[1:])
    assert code == 0 and capsys.readouterr().out == expected
    no_gc = [a for a in argv[1:] if a != "-Wl,--gc-sections"]
    assert main(no_gc) == 1
    out = capsys.readouterr().out
    assert "undefined reference to `board_npu_power_cycle'" in part
    assert "ld: libnpudrv.a(run.o): undefined reference to `board_npu_power_cycle'" in out
