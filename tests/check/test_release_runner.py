"""The Release-shaped C++ runner (fixtures/firmware/release): -O3 without -g in the C++ parts,
-fPIC with a GOT, an image of several MiB read through a memory map, the >= 1.0 blob layout.
`check` must give the right verdict from the evidence the image holds, and say which."""
from __future__ import annotations

import json
import mmap

import pytest

from weaklink import toolchain
from weaklink.check import check
from weaklink.cli import main
from weaklink.read.image import Image
from weaklink.read.elf import MAP_FROM, ElfFile

U85 = ("--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
       "--memory-mode", "Dedicated_Sram_384KB")


@pytest.fixture(scope="module")
def release(cross_toolchain):
    from weaklink.builders import release as fixtures_release

    return {i.variant.name: i for i in fixtures_release.build()}


def _check(image, elf=None, **kw):
    t = image.target
    return check(elf or image.elf, accelerator=t.accelerator, system_config=t.system_config,
                 memory_mode=t.memory_mode, **kw)


def test_the_images_have_the_release_traits(release):
    from elftools.elf.elffile import ELFFile

    for image in release.values():
        elf = ElfFile.from_path(image.elf)
        assert len(elf.data) > MAP_FROM and isinstance(elf.data, mmap.mmap)
        # -fPIC: a GOT, made by ld, inside the DDR output section (no .got section of its own)
        assert elf.find_section(".got") is None
        (got,) = Image.from_path(image.elf).lookup("_GLOBAL_OFFSET_TABLE_")
        ddr = elf.shdrs[elf.find_section(".ddr")]
        assert ddr.sh_addr < got.address < ddr.sh_addr + ddr.sh_size
        with open(image.elf, "rb") as fh:                   # DWARF: only the C parts
            units = [cu.get_top_DIE().get_full_path() for cu in
                     ELFFile(fh).get_dwarf_info().iter_CUs()]
        assert units and not any("EthosUBackend" in u or "runner" in u for u in units)
    relocs = ElfFile.from_path(release["release-u85"].relocs_elf)
    assert relocs.find_section(".rel.text") is not None


@pytest.mark.parametrize("variant", ["release-u55", "release-u85", "release-u85-weak"])
def test_verdict_from_the_code_read_through_the_got(release, variant):
    image = release[variant]
    report = _check(image)
    assert report.verdict == image.variant.expected
    evidence = report.table.base(2).evidence
    assert (evidence.reads, evidence.source) == (True, "code")
    assert "read through the GOT slot" in evidence.detail
    assert "by EthosUBackend_Cortex_M.cpp code in rt::platform_execute" in evidence.detail
    # the evidence decided: no assumption about who reads the pointer (a hang still rests on
    # the SoC model's one, that an unanswered access stalls)
    assert not any("is read by" in a for a in report.assumptions)
    assert all("stalls the NPU" in a for a in report.assumptions) and \
        bool(report.assumptions) == (image.variant.expected == "hang")
    fast = report.to_json()["bases"][2]["read_evidence"]
    assert fast == {"reads": True, "source": "code", "detail": evidence.detail}
    assert f"region 2 (fast scratch): read by the backend, from code: " in report.to_table()
    rules = {f.rule for f in report.findings}
    if variant == "release-u85-weak":
        assert "fast-scratch-null" in rules and report.table.base(2).address == 0
    else:
        assert "fast-scratch-null" not in rules


def test_u85_override_lands_in_sram_and_default_bss_in_dtcm(release):
    report = _check(release["release-u85"])
    assert report.fast_scratch.region == "SRAM" and report.fast_scratch.value == 0x31000000
    assert report.fast_scratch.size == 0x60000
    elf = ElfFile.from_path(release["release-u85"].elf)
    bss = elf.shdrs[elf.find_section(".bss")]
    assert 0x30000000 <= bss.sh_addr < 0x30080000                 # the CPU's DTCM


@pytest.mark.parametrize("variant, reads, verdict", [
    ("release-u85", True, "ok"), ("release-u85-unread", False, "hang")])
def test_relocations_decide_both_ways(release, variant, reads, verdict):
    image = release[variant]
    for report, source in ((_check(image, image.relocs_elf), "relocations"),
                           (_check(image, link_inputs=image.objects), "link inputs")):
        evidence = report.table.base(2).evidence
        assert (evidence.reads, evidence.source) == (reads, source)
        assert report.verdict == verdict
        assert not any("is read by" in a for a in report.assumptions)
    if not reads:
        note = report.table.base(2).note
        assert "the backend passes 0/0 (no relocation against `ethosu_fast_scratch` in " in note
        assert "EthosUBackend_Cortex_M.o" in note


def test_no_evidence_either_way_is_an_assumption_said_in_the_report(release):
    image = release["release-u85-unread"]
    report = _check(image)
    evidence = report.table.base(2).evidence
    assert (evidence.reads, evidence.source) == (None, "none")
    # the binding's documented behaviour: the backend reads the override (here it does not,
    # which only relocations can show)
    assert report.verdict == "ok" and report.table.base(2).address == 0x31000000
    (assumption,) = report.assumptions
    assert assumption.startswith("`ethosu_fast_scratch` is read by the *EthosUBackend* code")
    assert "--link-input" in assumption and "--emit-relocs" in assumption
    assert report.to_json()["assumptions"] == [assumption]
    assert f"assumption: {assumption}" in report.to_table()


def test_shared_sram_never_rests_on_the_assumption(release, tmp_path):
    """Region 2 unused: whatever the backend reads, the verdict does not depend on it."""
    report = _check(release["release-u55"])
    assert 2 not in report.needs and report.assumptions == ()


# -- every command on a mapped image ------------------------------------------------------------
def test_check_cli_json_on_a_mapped_image_with_the_backend_archive(release, capsys, tmp_path):
    image = release["release-u85"]
    backend = [o for o in image.objects if o.stem.startswith("EthosUBackend")]
    lib = tmp_path / "libbackend.a"
    assert toolchain.run("ar", ["rcs", lib, *backend]).returncode == 0
    assert main(["check", str(image.elf), *U85, "--json", "--link-input", str(lib)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["npu"] == "ok" and out["assumptions"] == []
    evidence = out["bases"][2]["read_evidence"]
    assert evidence["source"] == "link inputs"
    assert evidence["detail"].endswith("libbackend.a(EthosUBackend_Cortex_M.o)")


def test_analyze_and_diff_on_mapped_images(release, capsys):
    ok, weak = release["release-u85"], release["release-u85-weak"]
    assert main(["analyze", "--json", str(ok.elf), "--map", str(ok.map),
                 "--symbol", "ethosu_fast_scratch"]) == 0
    sym = json.loads(capsys.readouterr().out)["queried"]["ethosu_fast_scratch"]
    assert sym["binding"] == "global" and sym["points_to"]["symbol"] == "dedicated_sram"
    assert main(["diff", "--json", str(weak.elf), str(ok.elf), "--check", *U85]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["verdict_before"], out["verdict_after"]) == ("hang", "ok")


def test_functional_check_on_a_mapped_image_with_the_six_entry_blob(release, capsys):
    image = release["release-u55"]
    report = _check(image, functional=True)
    assert report.table.model.shape_dims == 6
    assert report.verdict == "ok" and report.functional.outputs_equal
    assert main(["check", str(image.elf), "--accelerator", "ethos-u55-128", "--system-config",
                 "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram",
                 "--functional"]) == 0
    assert "output bytes equal" in capsys.readouterr().out


# -- the other forms code holds an address in ------------------------------------------------------
@pytest.mark.parametrize("flags, form", [
    (["-fno-PIC"], "held in a literal pool at"),                 # R_ARM_ABS32
    (["-fno-PIC", "-mpure-code"], "built by a MOVW/MOVT pair at"),  # R_ARM_THM_MOVW/MOVT_ABS
])
def test_code_evidence_in_literal_pools_and_movw_movt(release, tmp_path, flags, form):
    from weaklink.builders import firmware as fixtures, release as fixtures_release

    image = release["release-u85"]
    root = fixtures.cache_dir()
    backend = fixtures_release.compile_source(
        fixtures.FIRMWARE / "release" / "EthosUBackend_Cortex_M.cpp",
        root / "release" / "forms" / f"{'_'.join(flags)}" / "EthosUBackend_Cortex_M.o", flags, root)
    objects = [backend if o.name == backend.name else o for o in image.objects]
    elf = tmp_path / "fw.elf"
    done = toolchain.run("ld", ["-T", image.script, "-o", elf, *objects, toolchain.libgcc_path()])
    assert done.returncode == 0, done.stderr
    report = _check(image, elf)
    evidence = report.table.base(2).evidence
    assert (evidence.reads, evidence.source) == (True, "code")
    assert form in evidence.detail and "EthosUBackend_Cortex_M.cpp code" in evidence.detail
    assert report.verdict == "ok"


def test_without_local_symbols_functions_name_the_reader(release, tmp_path):
    """ld -x drops the STT_FILE and mapping symbols: code is attributed by function names."""
    from weaklink.bind.binding import PRESETS

    image = release["release-u85"]
    elf = tmp_path / "fw.elf"
    done = toolchain.run("ld", ["-x", "-T", image.script, "-o", elf, *image.objects,
                                toolchain.libgcc_path()])
    assert done.returncode == 0, done.stderr
    report = _check(image, elf)               # no unit called *EthosUBackend*: no evidence
    assert report.table.base(2).evidence.source == "none" and report.assumptions
    binding = tmp_path / "by-function.toml"
    binding.write_text((PRESETS / "executorch-arm.toml").read_text().replace(
        'reader = "*EthosUBackend*"', 'reader = "*platform_execute*"'))
    report = _check(image, elf, binding=binding)
    evidence = report.table.base(2).evidence
    assert (evidence.reads, evidence.source) == (True, "code")
    assert "by unattributed code in rt::platform_execute" in evidence.detail
    assert report.verdict == "ok" and report.assumptions == ()
