"""Benchmark `weaklink analyze --json` against `arm-none-eabi-nm -S` at 10k, 50k, 200k, 800k symbols.

Run: python benchmarks/bench_analyze.py [--symbols N ...] [--repeat K] [--detail]

Goals: at most 3.0x nm's wall time at every size (a scaling guard; benchmarks/bench_real.py
measures the images users have).

The image is generated once (assembled from a .s of N global labels, a quarter each Thumb
functions, initialised .data pointers, weak .bss objects and C++-mangled .rodata bytes) and
cached under the repository's git-ignored .cache/ directory, keyed by N and the toolchain.
Both tools run as subprocesses with stdout to /dev/null, so process start-up counts for both
and the cost of a reader does not. The commands take turns in every round (the machine is
shared: load then hits all of them alike) and the best round of each is reported.

`weaklink` is measured as a user runs it: the `weaklink` command of a wheel built from this
checkout and installed into its own virtual environment (cached under .cache/, rebuilt when
the package's sources change). pip compiles the modules at install, as for any user; a
development checkout may differ (an editable install adds an import hook to every start, and
PYTHONDONTWRITEBYTECODE makes Python compile every module on every run), so the same command
from this checkout's interpreter is printed beside it.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from weaklink import toolchain

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench_analyze"

# -g: the assembler's DWARF (a compile unit with .debug_aranges): functions are attributable.
ASM_FLAGS = ("-g",)
LINKER_SCRIPT = """\
MEMORY {
  FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 16M
  RAM   (rw) : ORIGIN = 0x30000000, LENGTH = 16M
}
ENTRY(f0)
SECTIONS {
  .text   : { *(.text*) } > FLASH
  .rodata : { *(.rodata*) } > FLASH
  .data   : { *(.data*) } > RAM AT > FLASH
  .bss (NOLOAD) : { *(.bss*) } > RAM
}
"""


def _symbol_source(i: int) -> str:
    kind = i % 4
    if kind == 0:   # Thumb function: st_value has bit 0 set in .symtab
        return (f'.section .text.f{i},"ax",%progbits\n.global f{i}\n.type f{i},%function\n'
                f".thumb_func\nf{i}:\n bx lr\n.size f{i}, .-f{i}\n")
    if kind == 1:   # pointer to the preceding function: R_ARM_ABS32 in .data
        return (f'.section .data.d{i},"aw",%progbits\n.global d{i}\n.type d{i},%object\n'
                f".balign 4\nd{i}:\n .word f{i - 1}\n.size d{i},4\n")
    if kind == 2:   # weak zero-initialised object (nm letter V)
        return (f'.section .bss.b{i},"aw",%nobits\n.weak b{i}\n.type b{i},%object\n'
                f".balign 4\nb{i}:\n .space 8\n.size b{i},8\n")
    name = f"_ZN2ns{len(f'r{i}')}r{i}E"   # ns::r<i>
    return (f'.section .rodata.r{i},"a",%progbits\n.global {name}\n.type {name},%object\n'
            f"{name}:\n .byte 1\n.size {name},1\n")


def build_image(n: int) -> Path:
    key = hashlib.sha256(f"{n}|{toolchain.version()}|{LINKER_SCRIPT}|{ASM_FLAGS}".encode()
                         ).hexdigest()[:12]
    out = CACHE / f"big_{n}_{key}"
    elf = out / "big.elf"
    if elf.exists():
        return elf
    out.mkdir(parents=True, exist_ok=True)
    (out / "big.s").write_text(".syntax unified\n.thumb\n"
                               + "".join(_symbol_source(i) for i in range(n)))
    (out / "big.ld").write_text(LINKER_SCRIPT)
    for name, argv in (("gcc", [*toolchain.CPU_FLAGS, *ASM_FLAGS, "-c", "big.s", "-o", "big.o"]),
                       ("ld", ["-T", "big.ld", "big.o", "-o", "big.elf.tmp", "-Map", "big.map"])):
        done = toolchain.run(name, argv, cwd=out)
        if done.returncode:
            sys.exit(f"{name} failed:\n{done.stderr[-2000:]}")
    (out / "big.elf.tmp").rename(elf)
    return elf


def _package_key() -> str:
    files = sorted(p for d in ("weaklink", "npu") for p in (REPO / d).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for p in [*files, REPO / "pyproject.toml", REPO / "setup.py"]:
        if p.exists():
            h.update(str(p.relative_to(REPO)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def installed_weaklink() -> Path:
    """The `weaklink` command of this checkout installed from a wheel into its own venv."""
    where = CACHE / f"venv_{_package_key()}"
    tool = where / "bin" / "weaklink"
    if tool.exists():
        return tool
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
            ".git", ".cache", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp,
                        str(src)], check=True, capture_output=True)
        (wheel,) = Path(tmp).glob("weaklink-*.whl")
        for old in CACHE.glob("venv_*"):        # earlier sources' installs: one is kept
            shutil.rmtree(old, ignore_errors=True)
        venv.EnvBuilder(with_pip=True).create(where)
        subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                       check=True, capture_output=True, env=_user_env())
    return tool


def _user_env() -> dict:
    """The environment of a user's shell: this sandbox's PYTHONDONTWRITEBYTECODE removed."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_times(commands: dict[str, list[str]], repeat: int) -> dict[str, float]:
    """Best wall time of each command over `repeat` rounds, the commands taking turns."""
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeat):
        for key, argv in commands.items():
            t0 = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  env=_user_env())
            best[key] = min(best[key], time.perf_counter() - t0)
            if proc.returncode != 0:
                sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return best


def output_size(argv: list[str]) -> int:
    return len(subprocess.run(argv, capture_output=True).stdout)


def in_process(elf: Path, repeat: int) -> float:
    """Best time of analyze() + to_json() inside this process: the model without start-up."""
    from weaklink.analyze import analyze
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        analyze(str(elf)).to_json()
        best = min(best, time.perf_counter() - t0)
    return best


GOALS = {10_000: 3.0, 200_000: 3.0, 800_000: 3.0}


def goal(n: int) -> float | None:
    return 3.0 if n >= 200_000 else GOALS.get(n)


def detail(elf: Path, n: int, repeat: int) -> None:
    """Where the time goes on one image: start-up, the model in process, attribution."""
    lean = [str(installed_weaklink()), "analyze"]
    queried = ["f0", "d1", "b2", "_ZN2ns2r3E"]
    q_args = [a for s in queried for a in ("--symbol", s)]
    t = best_times({
        "start": [*lean, "--help"],
        "dwarf": [*lean, "--json", str(elf), *q_args],
        "map": [*lean, "--json", str(elf), "--map", str(elf.with_suffix(".map")), *q_args],
    }, repeat)
    print(f"\n{n} symbols in detail:")
    print(f"analyze() + to_json() in process {in_process(elf, repeat):6.3f} s  (no interpreter start-up)")
    print(f"start-up alone (--help)          {t['start']:6.3f} s  (python, the weaklink package)")
    print(f"{len(queried)} queried symbols, DWARF attribution {t['dwarf']:6.3f} s")
    print(f"{len(queried)} queried symbols, --map attribution {t['map']:6.3f} s  (includes parsing the "
          f"{elf.with_suffix('.map').stat().st_size} byte map)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, nargs="+", default=[10_000, 50_000, 200_000, 800_000])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--detail", action="store_true", help="also break down the largest image")
    args = ap.parse_args()
    rows = []
    tool = installed_weaklink()
    print(f"{'symbols':>8}  {'nm -S':>8}  {'weaklink':>9}  {'ratio':>6}  {'goal':>5}  "
          f"{'this checkout':>19}  output nm / weaklink")
    for n in args.symbols:
        elf = build_image(n)
        nm = [toolchain.tool("nm"), "-S", str(elf)]
        cli = [str(tool), "analyze", "--json", str(elf)]
        here = [sys.executable, "-m", "weaklink.cli", "analyze", "--json", str(elf)]
        t = best_times({"nm": nm, "cli": cli, "here": here}, args.repeat)
        ratio, g = t["cli"] / t["nm"], goal(n)
        met = "" if g is None else ("met" if ratio <= g else "MISSED")
        rows.append((n, ratio, g))
        print(f"{n:>8}  {t['nm']:7.3f}s  {t['cli']:8.3f}s  {ratio:5.2f}x  "
              f"{'' if g is None else f'{g:.1f}x':>5}  {t['here']:8.3f}s ({t['here'] / t['nm']:5.2f}x)"
              f"  {output_size(nm) / 1e6:.1f} / {output_size(cli) / 1e6:.1f} MB  {met}")
    print(f"(best of {args.repeat} rounds, the commands taking turns; the machine is shared)")
    if args.detail:
        detail(build_image(args.symbols[-1]), args.symbols[-1], args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
