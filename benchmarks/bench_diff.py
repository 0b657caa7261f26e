"""Benchmark `weaklink diff` of two 200k-symbol images against `weaklink analyze` of one, and
against `arm-none-eabi-nm -S` on both (what a shell gate would diff).

Run: python benchmarks/bench_diff.py [--symbols N] [--repeat K]

OLD is bench_analyze's image. NEW is the same program after a change: a 64-byte function in
front of all code and a word in front of all data (every symbol after them moves, every pointer
follows its target), one weak object in 500 made strong, one data symbol in ~2000 removed and 100
added. The goal is diff ≤ 2 × analyze. Commands take turns in every round; best of K.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_analyze as BA  # noqa: E402

from weaklink import toolchain  # noqa: E402

GROW = ('.section .text.a_grow,"ax",%progbits\n.global a_grow\n.type a_grow,%function\n'
        ".thumb_func\na_grow:\n .space 64\n.size a_grow, .-a_grow\n"
        '.section .data.a_pad,"aw",%progbits\n.global a_pad\n.type a_pad,%object\n'
        ".balign 4\na_pad:\n .word 7\n.size a_pad,4\n")


def _changed_source(i: int) -> str:
    if i % 997 == 5 and i % 4 >= 2:                  # no function: pointers stay valid
        return ""                                         # removed
    text = BA._symbol_source(i)
    if i % 4 == 2 and i % 500 == 2:                       # weak → strong (binding-changed)
        text = text.replace(f".weak b{i}", f".global b{i}")
    return text


def build_new_image(n: int) -> Path:
    key = hashlib.sha256(f"new|{n}|{toolchain.version()}|{BA.LINKER_SCRIPT}|{BA.ASM_FLAGS}|"
                         f"{GROW}".encode()).hexdigest()[:12]
    out = BA.CACHE / f"big_new_{n}_{key}"
    elf = out / "big.elf"
    if elf.exists():
        return elf
    out.mkdir(parents=True, exist_ok=True)
    added = "".join(BA._symbol_source(i) for i in range(n, n + 100))
    (out / "big.s").write_text(".syntax unified\n.thumb\n" + GROW
                               + "".join(_changed_source(i) for i in range(n)) + added)
    (out / "big.ld").write_text(BA.LINKER_SCRIPT)
    for name, argv in (("gcc", [*toolchain.CPU_FLAGS, *BA.ASM_FLAGS, "-c", "big.s", "-o", "big.o"]),
                       ("ld", ["-T", "big.ld", "big.o", "-o", "big.elf.tmp", "-Map", "big.map"])):
        done = toolchain.run(name, argv, cwd=out)
        if done.returncode:
            sys.exit(f"{name} failed:\n{done.stderr[-2000:]}")
    (out / "big.elf.tmp").rename(elf)
    return elf


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--symbols", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    old, new = BA.build_image(args.symbols), build_new_image(args.symbols)
    cli = [sys.executable, "-m", "weaklink.cli"]
    nm = toolchain.tool("nm")
    t = BA.best_times({
        "nm": [nm, "-S", str(old)],
        "nm2": ["sh", "-c", f'"{nm}" -S "{old}" > /dev/null && "{nm}" -S "{new}"'],
        "analyze": [*cli, "analyze", "--json", str(old)],
        "diff": [*cli, "diff", "--json", str(old), str(new)],
    }, args.repeat)
    import json
    import subprocess
    doc = json.loads(subprocess.run([*cli, "diff", "--json", str(old), str(new)],
                                    capture_output=True, check=True).stdout)
    counts = {k: v for k, v in doc["counts"].items() if v}
    print(f"images                         {old.parent.name}/big.elf vs {new.parent.name}/big.elf, "
          f"{args.symbols} symbols each")
    print(f"diff found                     {counts}; moved {doc['moved']['count']}")
    print(f"arm-none-eabi-nm -S (one)      {t['nm']:7.3f} s")
    print(f"arm-none-eabi-nm -S (both)     {t['nm2']:7.3f} s")
    print(f"weaklink analyze --json (one)  {t['analyze']:7.3f} s  ratio to nm {t['analyze'] / t['nm']:5.2f} x")
    print(f"weaklink diff --json (two)     {t['diff']:7.3f} s  ratio to nm of both "
          f"{t['diff'] / t['nm2']:5.2f} x")
    print(f"diff / analyze                 {t['diff'] / t['analyze']:7.2f} x   goal: <= 2.00")
    print(f"(best of {args.repeat} rounds; the machine is shared)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
