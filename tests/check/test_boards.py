"""Boards beyond Corstone: the SoC chosen from the image's NPU base and segments (unknown
outside the map), a user's SoC file, a Zephyr devicetree, and the driver's weak remap and
port hooks overridden by the image (fixtures/firmware/boards, built with the real toolchain)."""
from __future__ import annotations

import json

import pytest

from weaklink.check import check
from weaklink.cli import main
from weaklink.builders import firmware as fx
from weaklink.builders import tflm as fixtures_tflm
from weaklink.errors import InputError

BOARDS = fx.FIRMWARE / "boards"


@pytest.fixture(scope="module")
def boards(cross_toolchain):
    return {im.variant.name: im for im in fixtures_tflm.build(fixtures_tflm.BOARD_VARIANTS)}


@pytest.fixture(scope="module")
def corstone(cross_toolchain):
    v = next(v for v in fixtures_tflm.VARIANTS if v.name == "shared-sram-u55")
    return fixtures_tflm.build_variant(v)


def _check(im, **kw):
    t = im.target
    return check(im.elf, accelerator=t.accelerator, system_config=t.system_config,
                 memory_mode=t.memory_mode, map_path=im.map, **kw)


def _args(im):
    t = im.target
    return [str(im.elf), "--accelerator", t.accelerator, "--system-config", t.system_config,
            "--memory-mode", t.memory_mode]


def test_the_npu_base_the_image_passes_picks_the_soc(boards):
    """A WE2-shaped image initialises its NPU at 0x53020000: himax-we2, not a Corstone-300 hang
    at an address Corstone-300 does not map."""
    report = _check(boards["we2-u55"])
    assert report.soc == "himax-we2" and report.verdict == "ok"
    assert report.soc_choice.npu_base.address == 0x53020000
    assert "DWARF call site" in report.soc_choice.npu_base.source
    assert {b.memory for b in report.run.bases if b.region in report.needs} == {"SRAM0"}
    j = report.to_json()
    assert j["npu_base"]["address"] == 0x53020000 and j["soc_choice"]["name"] == "himax-we2"
    assert "himax-we2's NPU register page" in j["soc_choice"]["why"]
    table = report.to_table()
    assert "NPU base: 0x53020000" in table and "SoC: himax-we2" in table


def test_an_image_outside_the_map_is_unknown_never_a_hang(boards):
    """Its NPU base read from memory at run time, the WE2-shaped image matches no preset and
    loads outside Corstone-300's map: unknown, give --soc; named, it checks."""
    im = boards["we2-base-unread-u55"]
    report = _check(im)
    assert report.verdict == "unknown" and report.exit_code == 1
    assert report.soc_choice.npu_base.address is None
    assert "outside corstone-300's memory map" in report.cannot_tell and "give --soc" in report.cannot_tell
    assert not report.findings and not any("stalls the NPU" in a for a in report.assumptions)
    assert _check(im, soc="himax-we2").verdict == "ok"


def test_a_users_soc_file(boards, capsys):
    im = boards["we2-base-unread-u55"]
    report = _check(im, soc=str(BOARDS / "my-soc.toml"))
    assert report.verdict == "ok" and report.soc == "my-soc"
    assert report.to_json()["soc_choice"]["file"].endswith("my-soc.toml")
    assert main(["check", *_args(im), "--soc", str(BOARDS / "my-soc.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["soc"] == "my-soc"


@pytest.mark.parametrize("text, key", [
    ("npus = ['ethos-u55']\n[[memories]]\nname = 'A'\norigin = 0\nkind = 'Sram'\n", "memories[0].length"),
    ("[[memories]]\nname = 'A'\norigin = 0\nlength = 16\nkind = 'Sdram'\n", "memories[0].kind"),
    ("[[memories]]\nname = 'A'\norigin = 0\nlength = 16\nkind = 'Tcm'\nnpu = false\n", "memories[0].why"),
    ("[[memories]]\nname = 'A'\norigin = -1\nlength = 16\nkind = 'Sram'\n", "memories[0].origin"),
    ("colour = 1\n[[memories]]\nname = 'A'\norigin = 0\nlength = 16\nkind = 'Sram'\n", "colour"),
    ("npus = ['ethos-u55']\n", "memories"),
])
def test_a_bad_soc_file_names_the_key_and_the_file(tmp_path, boards, capsys, text, key):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        _check(boards["we2-u55"], soc=str(path))
    assert str(path) in str(e.value) and key in str(e.value)
    assert main(["check", *_args(boards["we2-u55"]), "--soc", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and key in err and "Traceback" not in err


def test_a_zephyr_devices_base_through_its_init_entry(boards):
    """Zephyr's shape: nothing calls the driver's init function but the init entry
    {ethosu_zephyr_init, &__device_dts_ord_14}; ethosu_init's base is the device's const
    config's first word. Read with r0 = the device, it is Corstone-300's NPU page, which picks
    corstone-300 from evidence rather than as the default."""
    report = _check(boards["zephyr-device-u55"])
    base = report.soc_choice.npu_base
    assert base.address == 0x48102000
    entry = "r0 = `__device_dts_ord_14` from Zephyr's init entry `__init___device_dts_ord_14`"
    assert f"(the code before the call, with {entry})" in base.source
    assert report.verdict == "ok" and report.soc == "corstone-300"
    assert "corstone-300's NPU register page" in report.soc_choice.why and entry in report.soc_choice.why
    assert report.to_json()["npu_base"]["address"] == 0x48102000
    assert "NPU base: 0x48102000" in report.to_table()


def test_a_zephyr_devicetree(corstone):
    """The memories and the arm,ethos-u node of a Zephyr build's zephyr.dts: the port
    reachability it does not tell is an assumption; a TCM is taken as private to the CPU."""
    from npu.socfile import load_soc

    dts = str(BOARDS / "zephyr-an547.dts")
    soc = load_soc(dts)
    assert soc.npu_base == (0x48102000,)
    assert {m.name: m.kind for m in soc.memories} == {"ITCM": "Tcm", "sram": "Sram", "DTCM": "Tcm",
                                                      "isram": "Sram", "DDR4#0": "Dram", "DDR4#1": "Dram"}
    assert not next(m for m in soc.memories if m.name == "DTCM").npu
    report = _check(corstone, soc=dts)
    assert report.verdict == "ok" and report.soc == "zephyr-an547.dts"
    # the fixture passes ethosu_init 0x40004000: said, against the devicetree's arm,ethos-u reg
    assert report.soc_choice.npu_base.address == 0x40004000
    assert "not zephyr-an547.dts's NPU register page (0x48102000)" in report.soc_choice.why
    assert any("the devicetree does not say which memories the NPU's ports reach" in a
               for a in report.assumptions)
    assert {b.memory for b in report.run.bases if b.region in report.needs} == {"isram", "DDR4#1"}


def test_analyze_board_takes_presets_and_files(boards, capsys):
    im = boards["we2-u55"]
    assert main(["analyze", str(im.elf), "--board", "himax-we2", "--json"]) in (0, 1)
    names = {r["name"] for r in json.loads(capsys.readouterr().out)["regions"]}
    assert {"SRAM0", "DTCM"} <= names
    assert main(["analyze", str(im.elf), "--board", str(BOARDS / "zephyr-an547.dts"), "--json"]) in (0, 1)
    assert "DDR4#1" in {r["name"] for r in json.loads(capsys.readouterr().out)["regions"]}


def test_the_remap_and_port_hooks_the_image_overrides(boards):
    """Alif's kit overrides the driver's weak ethosu_address_remap (local TCM -> global alias)
    and ethosu_config_select (MRAM and above on AXI0): the arena in the DTCM's local alias
    0x20000000 reaches the NPU at 0x58800000, the model in MRAM through AXI0. Without the
    overrides the same map hangs."""
    report = _check(boards["alif-he-remap-u55"])
    assert report.soc == "alif-e7-he" and report.verdict == "ok"
    assert report.soc_choice.npu_base.address == 0x400E1000
    by = {b.region: b for b in report.run.bases}
    assert report.table.base(1).address == 0x20000000 and by[1].address == 0x58800000
    assert by[1].memory == "DTCM" and by[0].memory == "MRAM" and by[0].port == "AXI0"
    assert any("ethosu_address_remap with a strong definition" in a for a in report.assumptions)
    assert any("at or above 0x60000000 go out on AXI0" in a for a in report.assumptions)
    j = report.to_json()
    assert j["bases"][1]["address"] == 0x20000000 and j["bases"][1]["npu_address"] == 0x58800000
    assert j["driver_hooks"] == {"ethosu_address_remap": "overridden",
                                 "ethosu_config_select": "overridden", "unknown": None}
    assert "npu " in report.to_table().splitlines()[[i for i, line in enumerate(report.to_table().splitlines())
                                                       if line.startswith("region")][0]]
    # the command stream goes through the hooks too: QBASE as remapped, QCONFIG by the port rule
    stream = j["operators"][0]["command_stream"]
    assert stream["memory"] == "MRAM" and stream["port"] == "AXI0" and stream["region"] == -1
    assert report.table.stream_address < stream["address"] < report.table.stream_address + 64
    row = next(line for line in report.to_table().splitlines() if line.startswith("-  "))
    assert "command stream" in row and f"{stream['address']:#010x}" in row and " MRAM " in row

    plain = _check(boards["alif-he-no-remap-u55"])
    assert plain.soc == "alif-e7-he" and plain.verdict == "hang"
    assert plain.to_json()["driver_hooks"]["ethosu_address_remap"] == "weak default"
    assert "MRAM, reachable through AXI0, not the AXI1 port" in plain.run.diagnosis
    # no hook: QBASE and QCONFIG as passed, no row of their own
    assert not any(line.startswith("-  ") for line in plain.to_table().splitlines())


def test_an_override_the_soc_does_not_describe_is_unknown(boards):
    """The remap hook overridden on a SoC that declares no alias: what the NPU gets cannot be
    told."""
    report = _check(boards["alif-he-remap-u55"], soc=str(BOARDS / "my-soc.toml"))
    assert report.verdict == "unknown"
    assert "declares no address alias" in report.cannot_tell
