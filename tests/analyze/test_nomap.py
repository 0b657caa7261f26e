"""`analyze` without --map: regions from the section headers where the segments do not reach,
defined_in from DWARF for every symbol that has it, and a table without "(None)".

The image is linked with a script in the style of ExecuTorch's Corstone ones: PHDRS with a
PT_NULL segment for .bss, NOLOAD scratch in SRAM and `.data : AT(...)`, so that no PT_LOAD
holds the run-time addresses of .data, .bss or the scratch."""
from __future__ import annotations

import io
import json

import pytest
from elftools.elf.elffile import ELFFile

from weaklink import toolchain
from weaklink.analyze import analyze
from weaklink.analyze import regions as R
from weaklink.analyze.render import render
from weaklink.read.dwarf import dwarf_of
from weaklink.read.image import Image

SCRIPT = """
MEMORY {
  ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 0x80000
  DTCM (rw) : ORIGIN = 0x30000000, LENGTH = 0x80000
  SRAM (rw) : ORIGIN = 0x31000000, LENGTH = 0x200000
  DDR (rwx) : ORIGIN = 0x70000000, LENGTH = 0x10000000
  FAR (rw)  : ORIGIN = 0x60000000, LENGTH = 0x1000
}
PHDRS { rom_exec PT_LOAD; rom_dram PT_LOAD; null PT_NULL; }
ENTRY(_start)
SECTIONS {
  .text : { *(.text*) } > ITCM :rom_exec
  .data : AT(ALIGN(LOADADDR(.text) + SIZEOF(.text), 4)) { *(.data*) } > DTCM :rom_exec
  .sram.bss (NOLOAD) : { . = ALIGN(16); *(.bss.ethosu_scratch) } > SRAM :null
  .ddr : { *(.rodata*) } > DDR :rom_dram
  .bss : { *(.bss) *(.bss.*) *(COMMON) } > DTCM :null
  .far (NOLOAD) : { *(.far*) } > FAR :null
}
"""

APP_C = r"""
#include <stddef.h>
__attribute__((section(".bss.ethosu_scratch"), aligned(16))) unsigned char scratch_buf[1024];
unsigned char *ethosu_fast_scratch = scratch_buf;
unsigned int counter;
const int table[4] = {1, 2, 3, 4};
extern int shared_flag;                      /* defined without DWARF (plain.c) */
extern unsigned char far_buf[];
unsigned char *far_ptr = far_buf;
struct driver { int state; } drv;
int init(struct driver *d, const void *base, int n);
void touch(int *p);
int step(void) { static int calls; touch(&shared_flag); return ++calls + table[counter & 3]; }
int _start(void) { return step() + init(&drv, 0, 384); }
"""

PLAIN_C = r"""
int shared_flag = 7;
__attribute__((section(".far"))) unsigned char far_buf[16];
void touch(int *p) { *p += 1; }
struct driver;
int init(struct driver *d, const void *base, int n) { (void)d; (void)base; return n; }
"""


@pytest.fixture(scope="module")
def image(cross_toolchain, tmp_path_factory):
    d = tmp_path_factory.mktemp("nomap")
    (d / "app.c").write_text(APP_C)
    (d / "plain.c").write_text(PLAIN_C)
    (d / "e.ld").write_text(SCRIPT)
    steps = [("gcc", [*toolchain.CPU_FLAGS, "-O2", "-g", "-fdata-sections", "-c", "app.c"]),
             ("gcc", [*toolchain.CPU_FLAGS, "-O2", "-fdata-sections", "-c", "plain.c"]),
             ("ld", ["-T", "e.ld", "app.o", "plain.o", "-o", "e.elf"])]
    for tool, argv in steps:
        done = toolchain.run(tool, argv, cwd=d)
        assert done.returncode == 0, done.stderr
    return d / "e.elf"


def test_segments_miss_the_data_and_bss(image):
    """The premise: from the segments alone .data, .bss and the scratch have no region."""
    seg = R.from_segments(Image.from_path(image))
    assert seg.name_at(0x30000000) is None and seg.name_at(0x31000000) is None


def test_regions_from_section_headers(image):
    report = analyze(str(image), symbols=["ethosu_fast_scratch", "counter", "scratch_buf"])
    assert report.regions.source == "segments+sections"
    names = report.regions.names
    assert ".sram.bss" in names and ".data+.bss" in names and ".far" in names
    q = report.queried
    assert q["counter"].region == ".data+.bss" and q["scratch_buf"].region == ".sram.bss"
    assert q["ethosu_fast_scratch"].points_to.region == ".sram.bss"
    doc = json.loads(report.to_json())
    assert all(s["region"] is not None for s in doc["symbols"])
    assert {r["name"] for r in doc["regions"]} == set(names)


def test_an_image_whose_segments_reach_everything_keeps_segment_regions(small_image):
    """No PHDRS: ld gives every allocated section, NOLOAD ones too, a PT_LOAD."""
    report = analyze(str(small_image.elf))
    assert report.regions == R.from_segments(Image.from_path(small_image.elf))
    assert report.regions.source == "segments"
    assert all(report.regions.name_at(a) is not None
               for a in report.table.cols.address)


def _dwarf_truth(path) -> dict[int, str]:
    """address -> unit of every variable (DW_OP_addr location, at any depth) and function
    (DW_AT_low_pc) definition, by pyelftools walking every DIE."""
    out = {}
    dwarf = ELFFile(io.BytesIO(path.read_bytes())).get_dwarf_info()
    for cu in dwarf.iter_CUs():
        unit = cu.get_top_DIE().attributes["DW_AT_name"].value.decode()
        for die in cu.iter_DIEs():
            a = die.attributes
            if die.tag == "DW_TAG_variable" and "DW_AT_location" in a:
                loc = a["DW_AT_location"].value
                if isinstance(loc, list) and len(loc) == 5 and loc[0] == 3:
                    out.setdefault(int.from_bytes(bytes(loc[1:]), "little"), unit)
            elif die.tag == "DW_TAG_subprogram" and "DW_AT_low_pc" in a:
                out.setdefault(a["DW_AT_low_pc"].value, unit)
    return out


def test_defined_in_for_every_symbol_with_dwarf(image):
    truth = _dwarf_truth(image)
    doc = json.loads(analyze(str(image)).to_json())
    got = {s["name"]: s["defined_in"] for s in doc["symbols"]}
    for s in doc["symbols"]:
        assert got[s["name"]] == truth.get(s["address"]), s["name"]
    assert got["counter"] == got["step"] == got["ethosu_fast_scratch"] == "app.c"


def test_a_call_site_is_not_a_definition(image):
    """_start passes &drv to init(): app.c's DWARF holds `05 03 <&drv>` twice, as drv's
    DW_AT_location and as the DW_AT_call_value of a DW_TAG_call_site_parameter. Only the
    first is a definition."""
    from weaklink.analyze.attribution import Attribution
    img = Image.from_path(image)
    a = Attribution(img)
    drv = img.lookup("drv")[0]
    dwarf = dwarf_of(img.elf)
    hits = dwarf.addresses.location_hits(drv.address)
    assert len(hits) == 2
    assert sorted(dwarf.scans.variable_at(h) for h in hits) == [False, True]
    assert a.defined_in(drv) == "app.c"
    shared = img.lookup("shared_flag")[0]          # plain.c has no DWARF: no unit
    assert a.defined_in(shared) is None


def test_table_never_prints_none(image):
    """far_ptr points to far_buf, which lies in no memory of the corstone-320 board."""
    report = analyze(str(image), board="corstone-320",
                     symbols=["far_ptr", "ethosu_fast_scratch", "shared_flag", "nope"])
    text = render(report)
    assert "None" not in text
    assert "far_buf+0x0 (no known region)" in text

