"""Random real-world link scenarios: compiled C and C++ objects, linked by the gcc driver with
newlib (nosys, nano, rdimon specs; -lm), with or without -T, --gc-sections, --wrap, --defsym,
-u, groups. The real link (through arm-none-eabi-gcc, with -Map --cref --print-gc-sections -y)
is the oracle; the model reads the same driver line (weaklink.resolve.link_driver).

Units come from a small pool of generated sources (seeded), so objects repeat across
scenarios; each is compiled once and kept in the cache directory under the digest of its
source, flags and toolchain, which keeps CI fast.
"""
from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from weaklink import toolchain
from weaklink.cachedir import cache_dir
from weaklink.resolve.gnu.oracle import differences, recorded_run

HOOKS = ("h0", "h1", "h2", "h3")
DATA = ("d0", "d1", "d2")
SPECS = (("-specs=nosys.specs",), ("-specs=nano.specs", "-specs=nosys.specs"),
         ("-specs=rdimon.specs",), ("-specs=nano.specs", "-specs=rdimon.specs"))
C_VARIANTS = (("-O2", "-ffunction-sections", "-fdata-sections"), ("-O1",),
              ("-Os", "-ffunction-sections", "-fdata-sections", "-fcommon"))
CXX_FLAGS = ("-fno-exceptions", "-fno-rtti", "-fno-threadsafe-statics", "-std=c++17")
SCRIPT = """ENTRY(_start)
SECTIONS
{
  .text : { KEEP(*(.vectors)) *(.text .text.*) KEEP(*(.init)) KEEP(*(.fini)) *(.rodata .rodata.*) }
  .ARM.exidx : { __exidx_start = .; *(.ARM.exidx*) __exidx_end = .; }
  .init_array : { PROVIDE_HIDDEN(__init_array_start = .); KEEP(*(SORT(.init_array.*)))
                  KEEP(*(.init_array)) PROVIDE_HIDDEN(__init_array_end = .); }
  .fini_array : { PROVIDE_HIDDEN(__fini_array_start = .); KEEP(*(.fini_array*))
                  PROVIDE_HIDDEN(__fini_array_end = .); }
  .preinit_array : { PROVIDE_HIDDEN(__preinit_array_start = .); KEEP(*(.preinit_array))
                     PROVIDE_HIDDEN(__preinit_array_end = .); }
  .keep : { KEEP(*(.keepme)) }
  .data : { *(.data .data.*) }
  .bss : { __bss_start__ = .; *(.bss .bss.* COMMON) __bss_end__ = .; }
  PROVIDE(end = .);
  PROVIDE(_end = .);
  _stack = 0x20080000;
  PROVIDE(__stack = _stack);
  PROVIDE(d2 = 0x1234);
  /DISCARD/ : { *(.disc) *(.comment) }
}
"""


# -- the unit pool ----------------------------------------------------------------------------------
def _c_unit(rng: random.Random, k: int) -> str:
    out = ["#include <stddef.h>"]
    for h in HOOKS:
        r = rng.random()
        if r < 0.2:
            out.append(f"void {h}(void) {{ }}")
        elif r < 0.4:
            out.append(f"__attribute__((weak)) void {h}(void) {{ }}")
        elif r < 0.6:
            out.append(f"void {h}(void); void call_{h}_{k}(void) {{ {h}(); }}")
        elif r < 0.7:
            out.append(f"__attribute__((weak)) void {h}(void); "
                       f"void maybe_{h}_{k}(void) {{ if ({h}) {h}(); }}")
    for d in DATA:
        r = rng.random()
        if r < 0.15:
            out.append(f"int {d} = {k};")
        elif r < 0.3:
            out.append(f"__attribute__((weak)) int {d} = 7;")
        elif r < 0.4:
            out.append(f"int {d};")                       # common under -fcommon
        elif r < 0.6:
            out.append(f"extern int {d}; int *use_{d}_{k}(void) {{ return &{d}; }}")
    if rng.random() < 0.3:
        out.append(f"void dead_{k}(void) {{ extern void missing_{k}(void); missing_{k}(); }}")
    if rng.random() < 0.2:
        out.append(f"#include <stdlib.h>\nvoid *grab_{k}(size_t n) {{ return malloc(n); }}")
    if rng.random() < 0.15:
        out.append(f"#include <stdio.h>\nvoid say_{k}(int v) {{ printf(\"%d\\n\", v); }}")
    if rng.random() < 0.15:
        out.append(f"#include <math.h>\ndouble root_{k}(double v) {{ return sqrt(v); }}")
    if rng.random() < 0.1:
        out.append(f'__attribute__((used, section(".keepme"))) int kept_{k} = 1;')
    if rng.random() < 0.1:
        out.append(f'__attribute__((section(".disc"))) int gone_{k} = 1;')
    if rng.random() < 0.1:
        out.append(f"__attribute__((constructor)) static void init_{k}(void) {{ }}")
    if rng.random() < 0.15:
        out.append(f"void *__wrap_malloc(size_t n) {{ extern void *__real_malloc(size_t); "
                   f"return __real_malloc(n + {k}); }}")
    if rng.random() < 0.15:
        out.append("void __wrap_h1(void) { extern void __real_h1(void); __real_h1(); }")
    if rng.random() < 0.08:                   # a /DISCARD/ed definition referenced (gen.ld)
        j = rng.randrange(k + 1)
        out.append(f"extern int gone_{j}; int *peek_{k}(void) {{ return &gone_{j}; }}")
    out.append(f"int unit_{k}(void) {{ return {k}; }}")
    return "\n".join(out) + "\n"


_CXX_UNIT = """
template <class T> T twice(T v) {{ return v + v; }}
inline int counter() {{ static int n; return ++n; }}
inline int shared_value = {k};
struct Box {{ int v; int get() const {{ return v + shared_value; }} }};
int cxx_{k}(int v) {{ Box b{{v}}; return twice(v) + counter() + b.get(); }}
{extra}
"""


def _cxx_unit(rng: random.Random, k: int) -> str:
    extra = []
    if rng.random() < 0.4:
        h = rng.randrange(4)
        extra.append(f'extern "C" void h{h}(void); void cxx_call_{k}() {{ h{h}(); }}')
    if rng.random() < 0.3:
        extra.append(f'extern "C" __attribute__((weak)) void h{rng.randrange(4)}(void) {{ }}')
    if rng.random() < 0.3:
        extra.append(f"int cxx_dead_{k}() {{ extern int nowhere_{k}; return nowhere_{k}; }}")
    if rng.random() < 0.3:
        extra.append("template long twice<long>(long);")       # explicit instantiation
    return _CXX_UNIT.format(k=k, extra="\n".join(extra))


@dataclass(frozen=True)
class Unit:
    name: str          # object file name in a scenario
    source: str
    cxx: bool
    flags: tuple[str, ...]


def unit_pool(size: int = 72, seed: int = 9) -> list[Unit]:
    rng = random.Random(seed)
    pool = []
    for k in range(size):
        cxx = k % 6 == 5
        src = _cxx_unit(rng, k) if cxx else _c_unit(rng, k)
        flags = (*CXX_FLAGS, "-O1", "-ffunction-sections", *(("-fdata-sections",)
                                                             if k % 2 else ())) \
            if cxx else rng.choice(C_VARIANTS)
        pool.append(Unit(f"u{k}.o", src, cxx, flags))
    return pool


MAIN = """
void h0(void); __attribute__((weak)) void h2(void);
extern int d0;
int unit_{a}(void); int unit_{b}(void);
int main(void) {{ h0(); if (h2) h2(); return d0 + unit_{a}() + unit_{b}(); }}
"""


# -- compiling, with a content-addressed cache ---------------------------------------------------
def _obj_cache() -> Path:
    return cache_dir() / "linkobj"


def compile_unit(unit: Unit, dest: Path) -> None:
    cc = "g++" if unit.cxx else "gcc"
    argv = (*toolchain.CPU_FLAGS, *unit.flags, "-c")
    key = hashlib.sha256("\0".join([toolchain.version(), cc, *argv, unit.source]).encode())
    cached = _obj_cache() / f"{key.hexdigest()[:32]}.o"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        src = cached.with_suffix(".cpp" if unit.cxx else ".c")
        src.write_text(unit.source)
        tmp = cached.with_suffix(f".tmp{random.randrange(1 << 30)}")
        done = toolchain.run(cc, [*argv, src, "-o", tmp])
        if done.returncode:
            raise RuntimeError(f"{cc} {unit.name}: {done.stderr}")
        tmp.replace(cached)
    shutil.copyfile(cached, dest)


# -- scenarios ------------------------------------------------------------------------------------
@dataclass
class RealScenario:
    seed: int
    root: Path
    units: list[Unit]
    archives: dict[str, list[str]]
    argv: list[str]                                    # the gcc driver line
    notes: list[str] = field(default_factory=list)


def generate(seed: int, root: Path, pool: list[Unit]) -> RealScenario:
    rng = random.Random(seed)
    c_units = [u for u in pool if not u.cxx]
    cxx_units = [u for u in pool if u.cxx]
    objs = rng.sample(c_units, rng.randint(0, 3)) + rng.sample(cxx_units, rng.randint(0, 1))
    lib_units = [u for u in rng.sample(pool, rng.randint(2, 7)) if u not in objs]
    main = Unit("main.o", MAIN.format(a=pool.index(rng.choice(pool)),
                                      b=pool.index(rng.choice(pool))), False, C_VARIANTS[0])
    split = rng.randint(0, len(lib_units))
    archives = {n: [u.name for u in us] for n, us in
                (("libapp.a", lib_units[:split]), ("libdrv.a", lib_units[split:])) if us}
    items = [[u.name] for u in objs] + [[a] for a in archives]
    rng.shuffle(items)
    if rng.random() < 0.3 and len(archives) == 2:
        items = [it for it in items if it[0] not in archives]
        items.append(["-Wl,--start-group", *archives, "-Wl,--end-group"])
    opts = [*rng.choice(SPECS)]
    if rng.random() < 0.6:
        opts.append("-Wl,--gc-sections")
    if rng.random() < 0.25:
        opts.append(f"-Wl,--wrap={rng.choice(('malloc', 'h1'))}")
    if rng.random() < 0.1:
        opts.append(f"-Wl,--defsym={rng.choice(DATA)}=0x400")
    if rng.random() < 0.1:
        opts.append(f"-Wl,-u,{rng.choice(('h3', 'unit_1', 'cxx_5'))}")
    if rng.random() < 0.3:
        opts.append("-Wl,-T,gen.ld")
    tail = ["-lm"] if rng.random() < 0.4 else []
    trace = [f"-Wl,-y,{s}" for s in ("h0", "h1", "d0", "malloc")]
    # C++ objects link through gcc too: CI has no libstdc++ for arm-none-eabi, and the units
    # need none (-fno-exceptions -fno-rtti, no operator new)
    argv = [toolchain.tool("gcc"), *toolchain.CPU_FLAGS, *opts, "main.o",
            *[a for it in items for a in it], *tail, *trace, "-o", "app.elf"]
    units = [main, *objs, *[u for u in lib_units]]
    return RealScenario(seed, root, units, archives, argv)


def build(sc: RealScenario) -> None:
    sc.root.mkdir(parents=True, exist_ok=True)
    for u in sc.units:
        compile_unit(u, sc.root / u.name)
    for name, members in sc.archives.items():
        (sc.root / name).unlink(missing_ok=True)
        done = toolchain.run("ar", ["rcs", name, *members], cwd=sc.root)
        if done.returncode:
            raise RuntimeError(done.stderr)
    (sc.root / "gen.ld").write_text(SCRIPT)


def real_link(sc: RealScenario):
    """The real link through the driver, with the map, --cref and --print-gc-sections."""
    extra = ["-Wl,-Map,out.map,--cref,--no-demangle"]
    if "-Wl,--gc-sections" in sc.argv:
        extra.append("-Wl,--print-gc-sections")
    proc = subprocess.run([*sc.argv, *extra], cwd=sc.root, capture_output=True, text=True)
    return recorded_run(proc.returncode, proc.stderr, sc.root / "out.map")


def compare(sc: RealScenario) -> list[str]:
    import weaklink.resolve

    (sc.root / "out.map").unlink(missing_ok=True)
    ld = real_link(sc)
    model = weaklink.resolve.link_driver(sc.argv, cwd=sc.root, cref=True)
    return differences(model, ld, args=list(model.ld_args))
