"""Every finding rule on the real fixture firmware (weaklink.builders.firmware: the ExecuTorch
fast-scratch story on Corstone-300/320)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from weaklink.analyze import analyze

SCRATCH = "ethosu_fast_scratch"
SCRATCH_SIZE = "ethosu_fast_scratch_size"


def _run(firmware, variant, **kw):
    outcome = firmware[variant]
    assert outcome.ok, outcome.stderr
    return analyze(str(outcome.elf), map_path=str(outcome.map), **kw)


def _rules(report, symbol=None):
    every = [*report.findings, *report.weak_findings()]
    return {(f.rule, f.severity) for f in every if symbol is None or f.symbol == symbol}


def test_weak_default_survived_is_info_by_default(firmware):
    report = _run(firmware, "weak-custom-u85", symbols=[SCRATCH])
    assert ("weak-default-survived", "info") in _rules(report, SCRATCH)
    q = report.queried[SCRATCH]
    assert (q.binding, q.value, q.points_to, q.region) == ("weak", 0, None, "BRAM")
    assert report.exit_code == 0


def test_weak_default_survived_warns_when_override_expected(firmware):
    report = _run(firmware, "weak-custom-u85", expect_override=[SCRATCH])
    assert ("weak-default-survived", "warning") in _rules(report, SCRATCH)
    assert report.exit_code == 1


def test_strong_override_linked_has_no_weak_finding(firmware):
    report = _run(firmware, "weak-example-u85", symbols=[SCRATCH, "dedicated_sram"],
                  expect_override=[SCRATCH], expect_region={SCRATCH: "SRAM"})
    assert not _rules(report, SCRATCH)
    q = report.queried[SCRATCH]
    assert q.binding == "global" and q.section == ".data"
    assert q.points_to.to_json() == {"symbol": "dedicated_sram", "offset": 0, "region": "SRAM"}
    assert report.queried["dedicated_sram"].size == 0x60000
    assert report.queried["dedicated_sram"].section == ".sram.bss"
    assert report.exit_code == 0


def test_near_miss_override(firmware):
    report = _run(firmware, "weak-near-miss-u85")
    near = [f for f in report.findings if f.rule == "near-miss-override"]
    assert {f.symbol for f in near} == {SCRATCH, SCRATCH_SIZE}
    assert all(f.severity == "warning" for f in near)
    assert any("executorch::backends::arm::ethosu_fast_scratch" in f.message for f in near)


def test_override_not_extracted_from_map_load_lines(firmware):
    report = _run(firmware, "weak-override-in-archive-u85")
    hits = [f for f in report.findings if f.rule == "override-not-extracted"]
    assert {f.symbol for f in hits} == {SCRATCH, SCRATCH_SIZE}
    assert all("librunner_overrides.a(" in f.message and "blocked-by-weak" in f.message
               for f in hits)


def test_override_not_extracted_from_link_inputs(firmware):
    outcome = firmware["weak-override-in-archive-u85"]
    inputs = [a for a in outcome.ld_args if a.endswith((".o", ".a"))]
    report = analyze(str(outcome.elf), board="corstone-320", link_inputs=inputs,
                     link_dir=str(outcome.cwd))
    assert {f.symbol for f in report.findings if f.rule == "override-not-extracted"} \
        == {SCRATCH, SCRATCH_SIZE}


def test_pointer_outside_region_wrong_memory(firmware):
    report = _run(firmware, "weak-wrong-memory-u65", expect_region={SCRATCH: "SRAM"})
    hit = [f for f in report.findings if f.rule == "pointer-outside-region"]
    assert len(hit) == 1 and hit[0].severity == "error" and "DTCM" in hit[0].message
    assert report.queried[SCRATCH].points_to.symbol == "dedicated_sram"
    assert report.queried[SCRATCH].points_to.region == "DTCM"
    assert report.exit_code == 1


def test_pointer_outside_region_null_weak_default(firmware):
    report = _run(firmware, "weak-custom-u85", expect_region={SCRATCH: "SRAM"})
    hit = [f for f in report.findings if f.rule == "pointer-outside-region"]
    assert len(hit) == 1 and "null" in hit[0].message


@pytest.mark.parametrize("variant", ["removed-custom-u55", "removed-custom-u85"])
def test_expected_symbol_missing(firmware, variant):
    report = _run(firmware, variant, expect_override=[SCRATCH])
    assert ("expected-symbol-missing", "error") in _rules(report, SCRATCH)
    assert report.exit_code == 1


def test_board_regions_match_map_regions(firmware):
    outcome = firmware["weak-example-u85"]
    by_map = analyze(str(outcome.elf), map_path=str(outcome.map), symbols=[SCRATCH])
    by_board = analyze(str(outcome.elf), board="corstone-320", symbols=[SCRATCH])
    assert [r.to_json() for r in by_map.regions.regions] == \
        [r.to_json() for r in by_board.regions.regions]
    # the runner's override and the backend's weak default both describe SCRATCH in DWARF:
    # the map says which object's definition won, and whose code is the runner unit's
    assert by_map.queried[SCRATCH].defined_in.endswith("runners/example.cpp")
    assert by_board.queried[SCRATCH].defined_in is None
    assert any(SCRATCH in n and "--map" in n for n in by_board.notes)
    assert replace(by_map.queried[SCRATCH], defined_in=None) == by_board.queried[SCRATCH]


def test_u55_regions_from_board(firmware):
    outcome = firmware["weak-example-u55"]
    report = analyze(str(outcome.elf), board="corstone-300", symbols=[SCRATCH])
    assert report.regions.find("SRAM").length == 0x200000
    assert report.queried[SCRATCH].found


def test_attribution_dwarf_and_map_agree_on_fixture(firmware):
    from weaklink.analyze.attribution import Attribution
    from weaklink.read.dwarf import dwarf_of
    from weaklink.read.image import Image
    from weaklink.read.ldmap import parse_map

    o = firmware["weak-wrong-memory-u65"]
    image = Image.from_path(o.elf)
    dwarf = Attribution(image)
    by_map = Attribution(image, parse_map(o.map))
    sym = image.lookup(SCRATCH)[0]
    # the backend's weak default and the override are both described at the override's
    # address: DWARF cannot say which won, the map can
    assert dwarf.defined_in(sym) is None and sym.address in dwarf.ambiguous
    assert by_map.map.defined_in(sym) == "u65/obj/override-wrong-memory.o"   # --cref table
    # the map places the override unit's other variable (the scratch array) in that object
    assert by_map.defined_in(sym).endswith("overrides/fast_scratch.cpp")
    funcs = [image.symbol(int(i)) for i in image.defined_globals.index
             if image.symbol(int(i)).type_name == "func"]
    assert funcs
    where = dwarf_of(image.elf).addresses
    for f in funcs:    # .debug_aranges and the CUs' DW_AT_ranges tell the same story
        cu = where.function_cu(f.address)
        assert cu is not None and cu == where.unit_by_pc(f.address), f.name


def test_query_by_demangled_cxx_name(firmware):
    name = "executorch::backends::arm::ethosu_fast_scratch"
    report = _run(firmware, "weak-near-miss-u85", symbols=[name])
    q = report.queried[name]
    assert q.found and q.raw_name == "_ZN10executorch8backends3arm19ethosu_fast_scratchE"
    assert q.points_to.symbol == "_ZN10executorch8backends3arm14dedicated_sramE"
    assert q.points_to.region == "SRAM" and q.defined_in.endswith("fast_scratch.cpp")


def _scope_variables(path) -> dict[int, str]:
    """DW_OP_addr address -> unit name of every variable defined at unit, namespace or class
    scope, by pyelftools walking every DIE of every unit."""
    import io

    from elftools.elf.elffile import ELFFile

    def scope(die):
        for child in die.iter_children():
            if child.tag == "DW_TAG_variable":
                yield child
            elif child.tag in ("DW_TAG_namespace", "DW_TAG_structure_type", "DW_TAG_class_type"):
                yield from scope(child)

    out = {}
    for cu in ELFFile(io.BytesIO(path.read_bytes())).get_dwarf_info().iter_CUs():
        top = cu.get_top_DIE()
        for die in scope(top):
            loc = die.attributes.get("DW_AT_location")
            if loc is not None and isinstance(loc.value, list) and len(loc.value) == 5 \
                    and loc.value[0] == 0x03:                     # DW_OP_addr
                out.setdefault(int.from_bytes(bytes(loc.value[1:]), "little"),
                               top.attributes["DW_AT_name"].value.decode())
    return out


def test_variable_attribution_byte_search_matches_die_walk(firmware):
    from weaklink.analyze.attribution import Attribution
    from weaklink.read.image import Image

    for variant in ("weak-near-miss-u85", "weak-example-u55"):
        image = Image.from_path(firmware[variant].elf)
        a = Attribution(image)
        truth = _scope_variables(firmware[variant].elf)
        objects = [image.symbol(int(i)) for i in image.defined_globals.index]
        objects = [s for s in objects if s.type_name == "object"]
        assert objects
        for s in objects:       # the fast path against pyelftools walking every DIE
            got = a.defined_in(s)
            if s.address in a.ambiguous:      # a weak default and its override: no answer
                assert got is None
            else:
                assert got == truth.get(s.address), s.name
        assert len(a.ambiguous) < len(objects)


def test_map_inputs_missing_is_a_note_not_an_error(firmware, tmp_path):
    o = firmware["weak-override-in-archive-u85"]
    moved = tmp_path / "moved.map"                  # a map whose LOAD paths lead nowhere
    moved.write_text(o.map.read_text().replace("LOAD u85/", "LOAD gone/u85/"))
    report = analyze(str(o.elf), map_path=str(moved))
    assert not [f for f in report.findings if f.rule == "override-not-extracted"]
    assert any("--link-dir" in n for n in report.notes)
    fixed = analyze(str(o.elf), map_path=str(o.map), link_dir=str(o.cwd))
    assert not fixed.notes
