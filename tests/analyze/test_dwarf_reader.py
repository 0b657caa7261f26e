"""The DWARF reader (weaklink.read.dwarf) on images built by arm-none-eabi-gcc -g: its answers
against a full pyelftools walk of every unit (which reads every DIE, where the reader reads
only the units that hold the name asked about), and damaged sections as one DwarfError.

Three units: one defines the arena and the scratch and reads a pointer through a block-scope
extern, one calls the init function with the scratch's address and size (a DWARF 5 call site
at -O2), one defines the init function. Short names ("q") are DW_FORM_string, long ones strp;
"arena" is also the tail of "tensor_arena" in the merged .debug_str.
"""
from __future__ import annotations

import random
import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

from weaklink import toolchain
from weaklink.analyze.attribution import Attribution
from weaklink.bind import callsite
from weaklink.errors import InputError
from weaklink.read.dwarf import Dwarf, DwarfError
from weaklink.read.dwarf.forms import constant
from weaklink.read.elf import ElfFile
from weaklink.read.image import Image
from weaklink.ci.sourceloc import locate

UNITS = {
    "data.c": """\
unsigned char tensor_arena[4096] __attribute__((aligned(16)));
unsigned char scratch[256];
int q = 1;
int read_pointer(void) { extern int *fast_pointer; return *fast_pointer; }
""",
    "call.c": """\
extern unsigned char scratch[256];
extern unsigned char arena[64];
int ethosu_init(void *drv, const void *base, const void *fast, unsigned size, int s, int p);
static char drv[8];
int start(void) {
    arena[0] = 1;
    return ethosu_init(drv, (void *)0x10000000, scratch, sizeof scratch, 0, 1) + 1;
}
""",
    "init.c": """\
int *fast_pointer;
unsigned char arena[64];
__attribute__((noinline)) int ethosu_init(void *drv, const void *base, const void *fast,
                                          unsigned size, int s, int p)
{ return (int)drv + (int)base + (int)fast + (int)size + s + p + *fast_pointer; }
""",
}
NAMES = ["tensor_arena", "scratch", "q", "fast_pointer", "arena", "drv", "ethosu_init", "nope"]


# the DWARF versions GCC 12 writes, the 64-bit format, and sections ld compresses with zlib
@pytest.fixture(scope="module", params=["-gdwarf-5", "-gdwarf-4", "-gdwarf-5 -gdwarf64",
                                        "-gdwarf-5 --compress-debug-sections=zlib"])
def image(cross_toolchain, tmp_path_factory, request):
    tmp = tmp_path_factory.mktemp("dwarf")
    objs = []
    for name, text in UNITS.items():
        (tmp / name).write_text(text)
        obj = name.replace(".c", ".o")
        # the build directory mapped to one name: the string table, and so the offsets the
        # name search looks for, do not depend on where pytest builds
        flags = [f for f in request.param.split() if not f.startswith("--")]
        done = toolchain.run("gcc", [*toolchain.CPU_FLAGS, *flags, "-O2", "-c", name,
                                     f"-fdebug-prefix-map={tmp}=/src", "-o", obj], cwd=tmp)
        assert done.returncode == 0, done.stderr
        objs.append(obj)
    link = [f for f in request.param.split() if f.startswith("--")]
    done = toolchain.run("ld", ["-e", "start", *link, *objs, "-o", "t.elf"], cwd=tmp)
    assert done.returncode == 0, done.stderr
    return tmp / "t.elf"


def _pyelftools_walk(path):
    """(unit names, name -> units with a DW_TAG_variable called so, callee -> [(pc, regs)])
    from every DIE of every unit."""
    with open(path, "rb") as fh:
        dwarf = ELFFile(fh).get_dwarf_info()
        units, mentions, calls = [], {}, {}
        for cu in dwarf.iter_CUs():
            top = cu.get_top_DIE()
            unit = top.attributes["DW_AT_name"].value.decode()
            units.append(unit)
            for die in cu.iter_DIEs():
                if die.tag == "DW_TAG_variable":
                    for key in ("DW_AT_linkage_name", "DW_AT_name"):
                        if key in die.attributes:
                            name = die.attributes[key].value.decode()
                            if unit not in mentions.setdefault(name, []):
                                mentions[name].append(unit)
                if die.tag == "DW_TAG_call_site" and "DW_AT_call_origin" in die.attributes:
                    origin = die.get_DIE_from_attribute("DW_AT_call_origin")
                    name = origin.attributes["DW_AT_name"].value.decode()
                    regs = {}
                    for p in die.iter_children():
                        loc, val = p.attributes.get("DW_AT_location"), p.attributes.get(
                            "DW_AT_call_value")
                        if loc is not None and val is not None and len(loc.value) == 1:
                            regs[loc.value[0] - 0x50] = constant(bytes(val.value))
                    pc = die.attributes["DW_AT_call_return_pc"].value - 4
                    calls.setdefault(name, []).append((pc, regs))
    return units, mentions, calls


@pytest.mark.parametrize("expr,value", [
    (bytes([0x03, 0, 0, 0, 0x31]), 0x31000000),        # DW_OP_addr
    (bytes([0x48, 0x3E, 0x24]), 0x60000),               # lit24 lit14 shl
    (bytes([0x10, 0x80, 0x80, 0x01]), 0x4000),          # constu 16384
    (bytes([0x30]), 0),                                  # lit0
    (bytes([0x74, 0x70]), None),                         # breg4 -16: machine state
    (bytes([0x03, 0x00]), None),                         # truncated
    (bytes([0x31, 0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x24]), 0),   # 1 << 0xFFFFFFFF: no bit
])
def test_constant_expressions(expr, value):
    """The values call sites pass (DW_AT_call_value), as weaklink.bind.callsite reads them."""
    assert constant(expr) == value


def test_answers_match_a_full_walk(image):
    units, mentions, calls = _pyelftools_walk(image)
    dwarf = Dwarf(ElfFile.from_path(image))
    assert dwarf.unit_names() == units == ["data.c", "call.c", "init.c"]
    for name in NAMES:
        assert dwarf.variable_units(name) == mentions.get(name, []), name
    assert dwarf.variable_units("fast_pointer") == ["data.c", "init.c"]   # block-scope extern
    assert dwarf.variable_units("arena") == ["call.c", "init.c"]          # a strp tail
    got = [(a.call_site, {r: v for r, v in a.values.items() if v is not None})
           for a in callsite.from_dwarf(dwarf, "ethosu_init")]
    want = [(pc, {r: v for r, v in regs.items() if v is not None})
            for pc, regs in calls.get("ethosu_init", [])]
    assert got == want
    if want:                                   # DWARF 5: the call site carries r2 and r3
        assert got[0][1][3] == 256 and got[0][1][1] == 0x10000000
    assert callsite.from_dwarf(dwarf, "start") == []


def test_call_sites_across_units(cross_toolchain, tmp_path):
    """-flto: the call site sits in the link-time unit (`<artificial>`), its DW_AT_call_origin
    is a DIE there whose DW_AT_abstract_origin (DW_FORM_ref_addr) is the declaration in the
    caller's own unit, which holds the name."""
    for name in ("call.c", "init.c"):
        (tmp_path / name).write_text(UNITS[name])
    flags = [*toolchain.CPU_FLAGS, "-gdwarf-5", "-O2", "-flto"]
    for argv in ([*flags, "-c", "call.c"], [*flags, "-c", "init.c"],
                 [*flags, "-nostdlib", "-e", "start", "call.o", "init.o", "-o", "t.elf"]):
        done = toolchain.run("gcc", argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    want = []
    with open(tmp_path / "t.elf", "rb") as fh:
        for cu in ELFFile(fh).get_dwarf_info().iter_CUs():
            for die in cu.iter_DIEs():
                if die.tag == "DW_TAG_call_site" and "DW_AT_call_origin" in die.attributes:
                    origin = die.get_DIE_from_attribute("DW_AT_call_origin")
                    while "DW_AT_name" not in origin.attributes:
                        origin = origin.get_DIE_from_attribute("DW_AT_abstract_origin")
                    if origin.attributes["DW_AT_name"].value == b"ethosu_init":
                        want.append(die.attributes["DW_AT_call_return_pc"].value - 4)
    dwarf = Dwarf(ElfFile.from_path(tmp_path / "t.elf"))
    assert dwarf.unit_names()[0] == "<artificial>" and want
    assert [a.call_site for a in callsite.from_dwarf(dwarf, "ethosu_init")] == want


def test_only_the_units_holding_the_name_are_walked(image):
    dwarf = Dwarf(ElfFile.from_path(image))
    starts = dwarf.info.unit_starts
    # a superset by design: a unit whose bytes hold the string's offset by chance is walked
    # too; the unit that defines the name always is, and a name no unit holds walks none
    candidates = dwarf._candidates("tensor_arena")
    assert starts[0] in candidates and len(candidates) < len(starts)
    assert dwarf._candidates("nope") == []


def test_source_lines(image):
    where = locate(Image.from_path(image), ["tensor_arena", "ethosu_init", "start"])
    assert {k: (v.file.rsplit("/", 1)[-1], v.line) for k, v in where.items()} == {
        "tensor_arena": ("data.c", 1), "ethosu_init": ("init.c", 3), "start": ("call.c", 5)}


def test_no_pyelftools(image):
    """Every DWARF question is answered from the bytes: where pyelftools cannot be imported,
    the answers are the same."""
    code = ("import sys; sys.modules['elftools'] = None\n"
            "from weaklink.analyze.attribution import Attribution\n"
            "from weaklink.bind import callsite\n"
            "from weaklink.read.dwarf import dwarf_of\n"
            "from weaklink.read.image import Image\n"
            "from weaklink.ci.sourceloc import locate\n"
            "image = Image.from_path(sys.argv[1]); dwarf = dwarf_of(image.elf)\n"
            "init = image.lookup('ethosu_init')[0]\n"
            "print(repr((dwarf.unit_names(), [dwarf.variable_units(n) for n in sys.argv[2:]],\n"
            "            callsite.from_dwarf(dwarf, 'ethosu_init'), locate(image, sys.argv[2:]),\n"
            "            Attribution(image).defined_in(init))))")
    done = subprocess.run([sys.executable, "-c", code, str(image), *NAMES], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    image_ = Image.from_path(image)
    dwarf = Dwarf(image_.elf)
    want = (dwarf.unit_names(), [dwarf.variable_units(n) for n in NAMES],
            callsite.from_dwarf(dwarf, "ethosu_init"), locate(image_, NAMES),
            Attribution(image_).defined_in(image_.lookup("ethosu_init")[0]))
    assert done.stdout.strip() == repr(want) and "init.c" in done.stdout


def _section_range(elf: ElfFile, name: str) -> range:
    sh = elf.shdrs[elf.find_section(name)]
    return range(sh.sh_offset, sh.sh_offset + sh.sh_size)


@pytest.mark.parametrize("section", [".debug_info", ".debug_abbrev", ".debug_line"])
def test_damaged_dwarf_is_one_error(image, tmp_path, section):
    """A few bytes changed anywhere in a section: every question answers, or raises one
    DwarfError naming the file (never another exception). Fixed seeds."""
    raw = image.read_bytes()
    where = _section_range(ElfFile.from_path(image), section)
    errors = 0
    for seed in range(60):
        rng = random.Random(seed)
        data = bytearray(raw)
        for _ in range(rng.randint(1, 6)):
            data[rng.choice(where)] = rng.randrange(256)
        path = tmp_path / f"fuzz{seed}.elf"
        path.write_bytes(bytes(data))
        dwarf = Dwarf(ElfFile.from_path(path))
        try:
            dwarf.unit_names()
            for name in NAMES:
                dwarf.variable_units(name)
            callsite.from_dwarf(dwarf, "ethosu_init")
        except DwarfError as exc:
            assert isinstance(exc, InputError) and exc.path == str(path)
            assert "\n" not in str(exc)
            errors += 1
        locate(Image.from_path(path), ["tensor_arena", "ethosu_init"])      # best effort: never raises
    if section != ".debug_line":
        assert errors                          # damage the questions read is reported


def test_damage_check_reads_is_one_line(firmware, tmp_path, capsys):
    """.debug_abbrev overwritten: the units check asks about cannot be walked, and check
    says so in one line (exit 2, nothing else printed)."""
    import weaklink.cli as cli

    outcome = firmware["weak-custom-u55"]
    elf = ElfFile.from_path(outcome.cwd / outcome.elf)
    data = bytearray(elf.data)
    where = _section_range(elf, ".debug_abbrev")
    data[where.start:where.stop] = b"\x7f" * len(where)
    bad = tmp_path / "bad.elf"
    bad.write_bytes(bytes(data))
    status = cli.main(["check", str(bad), "--accelerator", "ethos-u55-128", "--system-config",
                       "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith(f"weaklink: error: {bad}: damaged .debug_info") and err.count("\n") == 1
