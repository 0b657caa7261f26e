"""The DWARF reader (weaklink.read.dwarf) on real -g firmware (Zephyr, Himax WE2, Alif E7: GCC,
DWARF 4 and 5 units side by side, newlib's and libstdc++'s units), against pyelftools. The
images are third-party builds kept outside the repository, in the directory $WEAKLINK_REAL_FW
names: each test is skipped where its image is absent (and all of them without the variable)."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from weaklink.bind import callsite
from weaklink.bind.fastmem import DriverInit
from weaklink.check.board import npu_base
from weaklink.read import elfstructs as S
from weaklink.read.dwarf import dwarf_of
from weaklink.read.dwarf.forms import constant
from weaklink.read.image import Image

REAL = Path(os.environ["WEAKLINK_REAL_FW"]) if os.environ.get("WEAKLINK_REAL_FW") else None
IMAGES = ["zephyr/out/zephyr.elf", "himax/out/allon_sensor_tflm/allon_sensor_tflm.elf",
          "alif/out/he-sram/ethos-u-alif_kws.elf"]


@pytest.fixture(scope="module", params=IMAGES)
def real(request):
    path = REAL / request.param if REAL is not None else None
    if path is None:
        pytest.skip("WEAKLINK_REAL_FW is not set (real firmware is kept outside the repository)")
    if not path.is_file():
        pytest.skip(f"{path}: not here (real firmware is kept outside the repository)")
    image = Image.from_path(path)
    return image, dwarf_of(image.elf), ELFFile(io.BytesIO(path.read_bytes())).get_dwarf_info()


def _text(die, name):
    attr = die.attributes.get(name)
    return None if attr is None else attr.value.decode()


def _file(dwarf, cu, index):
    """File `index` of the unit's line table as pyelftools parses it, joined to its directory
    and the unit's DW_AT_comp_dir (numbered from 1 up to DWARF 4, from 0 in DWARF 5)."""
    lp = dwarf.line_program_for_CU(cu)
    v5 = lp.header["version"] >= 5
    files, dirs = lp.header["file_entry"], lp.header["include_directory"]
    k = index if v5 else index - 1
    if not 0 <= k < len(files):
        return None
    comp_dir = _text(cu.get_top_DIE(), "DW_AT_comp_dir") or ""
    d = files[k].dir_index if v5 else files[k].dir_index - 1
    folder = dirs[d].decode() if 0 <= d < len(dirs) else comp_dir
    path = os.path.join(folder, files[k].name.decode())
    return os.path.normpath(os.path.join(comp_dir, path))


def test_units_and_line_tables(real):
    """Every unit's name; every file of every fifth unit's line table, with the unit's own."""
    image, ours, theirs = real
    cus = list(theirs.iter_CUs())
    assert ours.unit_names() == [_text(cu.get_top_DIE(), "DW_AT_name") or "?" for cu in cus]
    checked = 0
    for cu in cus[::5]:
        top = cu.get_top_DIE()
        unit = os.path.normpath(os.path.join(_text(top, "DW_AT_comp_dir") or "",
                                             _text(top, "DW_AT_name")))
        lp = theirs.line_program_for_CU(cu)
        first = 0 if lp.header["version"] >= 5 else 1
        for index in range(first, first + len(lp.header["file_entry"])):
            assert ours.sources.unit_file(cu.cu_offset, index) == (_file(theirs, cu, index), unit)
            checked += 1
    assert checked > 100


def test_function_units_and_declarations(real):
    """A function's unit from .debug_aranges and from the units' own ranges (DW_AT_ranges
    lists of DWARF 4 and 5, low and high pc); where a function or variable is declared,
    against the DIE pyelftools finds in that unit."""
    image, ours, theirs = real
    where = ours.addresses
    syms = [image.symbol(int(i)) for i in image.defined_globals.index]
    funcs = [s for s in syms if s.type == S.STT_FUNC]
    found = [s for s in funcs if where.function_cu(s.address) is not None]
    assert len(found) > len(funcs) // 2
    for s in found:     # an inline function's kept copy is in the ranges of every unit that
        # has one (ld resolves their DWARF to the copy it kept): .debug_aranges names one
        holders = [cu for cu, spans in where._unit_ranges
                   if any(lo <= s.address < hi for lo, hi in spans)]
        assert where.unit_by_pc(s.address) == holders[0], s.name
        assert where.function_cu(s.address) in holders, s.name
    located = 0
    for s in [s for s in syms if s.type in (S.STT_FUNC, S.STT_OBJECT)][::80]:
        cu = where.function_cu(s.address) if s.type == S.STT_FUNC else \
            next(iter(where.variable_cus(s.address)), None)
        if cu is None:
            continue
        want = _declaration(theirs, theirs.get_CU_at(cu), s.address, s.type == S.STT_FUNC)
        assert ours.sources.declared_at(cu, s.address, s.type == S.STT_FUNC) == want, s.name
        located += want is not None
    assert located > 5


def _declaration(dwarf, cu, address, is_function):
    def defines(die):
        a = die.attributes
        if is_function:
            return die.tag == "DW_TAG_subprogram" and "DW_AT_low_pc" in a \
                and a["DW_AT_low_pc"].value & ~1 == address
        loc = a.get("DW_AT_location")
        return die.tag == "DW_TAG_variable" and loc is not None and isinstance(loc.value, list) \
            and len(loc.value) == 5 and loc.value[0] == 0x03 \
            and int.from_bytes(bytes(loc.value[1:]), "little") == address

    die = next((d for d in cu.iter_DIEs() if defines(d)), None)
    if die is None:
        return None
    spec = next((die.get_DIE_from_attribute(a) for a in ("DW_AT_specification",
                                                          "DW_AT_abstract_origin")
                 if a in die.attributes), None)
    for d in (die, spec):
        if d is not None and "DW_AT_decl_line" in d.attributes \
                and "DW_AT_decl_file" in d.attributes:
            path = _file(dwarf, d.cu, d.attributes["DW_AT_decl_file"].value)
            if path:
                return path, d.attributes["DW_AT_decl_line"].value
    return None


def test_call_sites(real):
    """ethosu_init's call sites (DW_TAG_call_site) and their register values, against a
    pyelftools walk of every unit whose DIEs hold the name or its .debug_str offset (the
    reader's own filter: a superset of the units that name it)."""
    image, ours, theirs = real
    got = [(a.call_site, a.values) for a in callsite.from_dwarf(ours, "ethosu_init")]
    want = []
    for cu in theirs.iter_CUs():
        if cu.cu_offset not in ours._candidates("ethosu_init"):
            continue
        for die in cu.iter_DIEs():
            if die.tag != "DW_TAG_call_site" or "DW_AT_call_origin" not in die.attributes:
                continue
            origin = die.get_DIE_from_attribute("DW_AT_call_origin")
            if _text(origin, "DW_AT_name") != "ethosu_init":
                continue
            regs = {}
            for p in die.iter_children():
                loc, val = p.attributes.get("DW_AT_location"), p.attributes.get("DW_AT_call_value")
                if loc is not None and val is not None and len(loc.value) == 1 \
                        and 0x50 <= loc.value[0] <= 0x6F \
                        and (v := constant(bytes(val.value))) is not None:
                    regs[loc.value[0] - 0x50] = v
            want.append((die.attributes["DW_AT_call_return_pc"].value - 4, regs))
    assert got == want


def test_zephyrs_npu_base_through_its_init_entry(real):
    """Zephyr's sample calls ethosu_init only from ethosu_zephyr_init, which only its init entry
    calls; DWARF's call site gives r1 no value, the code read with r0 = the entry's device gives
    the devicetree's ethosu@48102000 (weaklink.bind.zephyrinit)."""
    image = real[0]
    if not image.lookup("ethosu_zephyr_init"):
        pytest.skip("not a Zephyr image")
    base = npu_base(DriverInit(image))
    assert base.address == 0x48102000
    assert "with r0 = `__device_dts_ord_14` from Zephyr's init entry `__init___device_dts_ord_14`" in base.source
