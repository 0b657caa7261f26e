"""Random link scenarios in ARM assembly, and the comparison of the model with the real ld.

A scenario: `main.o` (defines _start), a few objects and archives whose units each define a
unique symbol `u<N>` and do something random with the shared symbols s0..s3 (strong/weak
data or function definition, common, absolute, strong or weak reference) and reference other
units' `u<N>` (so members pull members, across archives too); some definitions sit in COMDAT
groups. The command line mixes orders, a group, --whole-archive, a repeated archive, -u,
-z muldefs, --defsym and a -T script with ENTRY, PROVIDE and an assignment, all at random
places; -y traces the shared symbols.
"""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from weaklink import toolchain
from weaklink.resolve.gnu.oracle import differences
from weaklink.scenario import Scenario

SHARED = ("s0", "s1", "s2", "s3")
ACTIONS = ("strong_data", "strong_func", "weak_data", "weak_func", "common", "abs",
           "comdat_weak", "comdat_global", "ref", "weakref")
WEIGHTS = (3, 1, 3, 1, 2, 1, 1, 1, 4, 2)


def _define(sym: str, action: str, rng: random.Random) -> list[str]:
    if action == "common":
        return [f".comm {sym},{rng.choice((4, 8, 16))},4"]
    if action == "abs":
        return [f".global {sym}", f".set {sym}, {rng.choice((16, 32))}"]
    if action.startswith("comdat"):              # a COMDAT group whose signature is the symbol
        bind = ".weak" if action == "comdat_weak" else ".global"
        return [f'.section .text.{sym},"axG",%progbits,{sym},comdat', f"{bind} {sym}",
                f".type {sym},%function", f"{sym}: .word 0", f".word u{rng.randint(0, 9)}"]
    bind = ".weak" if action.startswith("weak") else ".global"
    if action.endswith("func"):
        return [".text", bind + f" {sym}", f".type {sym},%function", f"{sym}: .word 0",
                f".size {sym},4"]
    size = rng.choice((4, 8))
    return [".data", bind + f" {sym}", f".type {sym},%object", f"{sym}: .space {size}",
            f".size {sym},{size}"]


def unit_source(uid: int, actions: dict[str, str], refs: list[tuple[str, bool]],
                rng: random.Random, extra: list[str] = ()) -> str:
    lines = [".text", f".global u{uid}", f".type u{uid},%function", f"u{uid}:", ".word 0",
             *extra]
    for sym, action in actions.items():
        if action in ("ref", "weakref"):
            refs = [*refs, (sym, action == "weakref")]
        else:
            lines += _define(sym, action, rng)
    for sym, weak in refs:
        lines += [*( [f".weak {sym}"] if weak else []), ".text", f".word {sym}"]
    return "\n".join(lines)


@dataclass
class Generated:
    root: Path
    sources: dict[str, str]          # object name -> assembly
    archives: dict[str, list[str]]   # archive name -> members
    args: list[str]
    thin: frozenset[str] = frozenset()   # archives to build as thin archives


def _actions(rng: random.Random, p: float) -> dict[str, str]:
    return {s: rng.choices(ACTIONS, WEIGHTS)[0] for s in SHARED if rng.random() < p}


def generate(seed: int, root: Path) -> Generated:
    rng = random.Random(seed)
    n_obj, n_ar = rng.randint(0, 3), rng.randint(1, 3)
    members = {f"lib{a}.a": [f"m{a}_{k}.o" for k in range(rng.randint(1, 4))] for a in range(n_ar)}
    units = ["main.o", *[f"o{k}.o" for k in range(n_obj)], *[m for ms in members.values() for m in ms]]
    uid = {name: i for i, name in enumerate(units)}
    sources = {}
    for name in units:
        others = [u for u in units if u != name and rng.random() < 0.25]
        refs = [(f"u{uid[o]}", rng.random() < 0.2) for o in others]
        extra = [".global _start", "_start:"] if name == "main.o" else []
        sources[name] = unit_source(uid[name], _actions(rng, 0.45), refs, rng, extra)
    items = [[n] for n in units[:1 + n_obj]] + [[a] for a in members]
    rng.shuffle(items)
    if rng.random() < 0.5:                                     # main first, usually
        items.sort(key=lambda it: it != ["main.o"])
    if rng.random() < 0.2 and n_ar:                           # --whole-archive
        k = rng.choice([i for i, it in enumerate(items) if it[0].endswith(".a")])
        items[k] = ["--whole-archive", items[k][0], "--no-whole-archive"]
    if rng.random() < 0.25:                                   # repeat an archive later
        a = rng.choice(list(members))
        items.insert(rng.randint(0, len(items)), [a])
    if rng.random() < 0.05 and n_obj:                         # an object listed twice
        items.insert(rng.randint(0, len(items)), [rng.choice(units[1:1 + n_obj])])
    for k, it in enumerate(items):                            # some archives found by -l
        if it[-1].endswith(".a") and rng.random() < 0.15:
            items[k] = [*it[:-1], "-l" + it[-1][3:-2]]
    if rng.random() < 0.35 and len(items) > 1:                # a group
        i = rng.randrange(len(items) - 1)
        j = rng.randrange(i + 1, len(items))
        items[i] = ["--start-group", *items[i]]
        items[j] = [*items[j], "--end-group"]
    if rng.random() < 0.25:                                   # -u, anywhere
        sym = rng.choice([*SHARED, *[f"u{uid[u]}" for u in units]])
        items.insert(rng.randint(0, len(items)), ["-u", sym])
    if rng.random() < 0.15:                                   # --defsym, anywhere
        items.insert(rng.randint(0, len(items)), ["--defsym", f"{rng.choice(SHARED)}=0x40"])
    if rng.random() < 0.1:                                    # a -T script, anywhere
        a, b = rng.sample(SHARED, 2)
        sources["gen.ld"] = f"ENTRY(_start)\nPROVIDE({a} = 0x80);\n{b} = 0x90;\n"
        items.insert(rng.randint(0, len(items)), ["-T", "gen.ld"])
    if rng.random() < 0.1:
        items.insert(0, ["-z", "muldefs"])
    args = [a for it in items for a in it]
    trace = [a for s in SHARED for a in ("-y", s)]
    thin = frozenset(a for a in members if rng.random() < 0.15)
    return Generated(root, sources, members, ["-e", "_start", "-L", ".", *args, *trace], thin)


def build_all(gens: list[Generated], workers: int = 2) -> None:
    """Assemble every object, then archive, in a small thread pool (the tools are processes)."""
    def assemble(job):
        root, name, text = job
        root.mkdir(parents=True, exist_ok=True)
        if name.endswith(".ld"):                    # a linker script, written as is
            (root / name).write_text(text)
            return
        (root / (name + ".s")).write_text(text + "\n")
        done = toolchain.run("as", [name + ".s", "-o", name], cwd=root)
        if done.returncode:
            raise RuntimeError(done.stderr)

    def archive(job):
        root, name, ms, thin = job
        Scenario(root).archive(name, ms, thin=thin)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(assemble, [(g.root, n, t) for g in gens for n, t in g.sources.items()]))
        list(pool.map(archive, [(g.root, a, ms, a in g.thin)
                                for g in gens for a, ms in g.archives.items()]))


class LdCrashed(Exception):
    """ld itself aborted ("internal error"): there is no answer to compare with."""


def compare(sc: Scenario, args: list[str]) -> list[str]:
    """Differences between the model and the real ld; [] when they agree (resolve/gnu/oracle.py:
    exit status, errors, extracted members in order, commons, -y lines, the --cref table and
    every symbol's defining file)."""
    ld = sc.ld(args)
    if "internal error" in ld.stderr:
        raise LdCrashed(ld.stderr.strip().splitlines()[-2] if ld.stderr.strip() else "")
    return differences(sc.link(args, cref=True), ld, args=args)
