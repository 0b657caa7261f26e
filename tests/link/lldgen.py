"""Random link scenarios for ld.lld (the shape of linkgen.py's, built by its build_all), and
the comparison of the lld model with the real ld.lld-16.

Every definition holds its own marker (a unit id and a definition number) so the defining file
of each symbol can be read back from the linked image: data and functions hold the marker
word, commons have a size unique to their unit, absolute symbols a unique value. Command lines
mix object/archive orders, --start-lib/--end-lib, groups, --whole-archive, repeated archives,
an object given twice, -l, -u, --defsym, --wrap, --gc-sections, COMDAT groups, muldefs and
--warn-backrefs.
"""
from __future__ import annotations

import random
from pathlib import Path

from linkgen import SHARED, Generated

from weaklink.resolve.lld import resolve
from weaklink.resolve.lld.oracle import differences, run_lld

ACTIONS = ("strong_data", "strong_func", "weak_data", "weak_func", "common", "abs",
           "comdat_weak", "comdat_global", "ref", "weakref")
WEIGHTS = (3, 1, 3, 1, 2, 1, 1, 1, 4, 2)


def _define(sym: str, action: str, uid: int, k: int, rng: random.Random) -> list[str]:
    marker = 0x1000 * (uid + 1) + k
    if action == "common":                      # size identifies the unit: 64*n + 4*uid
        return [f".comm {sym},{64 * rng.randint(1, 2) + 4 * uid + 4},4"]
    if action == "abs":
        return [f".global {sym}", f".set {sym}, {marker:#x}"]
    if action.startswith("comdat"):
        bind = ".weak" if action == "comdat_weak" else ".global"
        return [f'.section .text.{sym},"axG",%progbits,{sym},comdat', f"{bind} {sym}",
                f".type {sym},%function", f"{sym}: .word {marker:#x}", f".size {sym},4",
                f".word u{rng.randint(0, 9)}"]
    bind = ".weak" if action.startswith("weak") else ".global"
    if action.endswith("func"):
        return [".text", f"{bind} {sym}", f".type {sym},%function", f"{sym}: .word {marker:#x}",
                f".size {sym},4"]
    return [".data", f"{bind} {sym}", f".type {sym},%object", f"{sym}: .word {marker:#x}",
            f".word {rng.randint(0, 1 << 30)}", f".size {sym},8"]


def unit_source(uid: int, actions: dict[str, str], refs: list[tuple[str, bool]],
                rng: random.Random, extra: list[str] = ()) -> str:
    lines = [".text", f".global u{uid}", f".type u{uid},%function", f"u{uid}:",
             f".word {0x1000 * (uid + 1):#x}", f".size u{uid},4", *extra]
    for k, (sym, action) in enumerate(actions.items(), 1):
        if action in ("ref", "weakref"):
            refs = [*refs, (sym, action == "weakref")]
        else:
            lines += _define(sym, action, uid, k, rng)
    where = ".text" if rng.random() < 0.7 else f'.section .text.refs{uid},"ax",%progbits'
    for sym, weak in refs:                  # a separate section: --gc-sections may drop it
        lines += [*([f".weak {sym}"] if weak else []), where, f".word {sym}"]
    return "\n".join(lines)


def generate(seed: int, root: Path) -> Generated:
    rng = random.Random(seed)
    n_obj, n_ar = rng.randint(0, 3), rng.randint(1, 3)
    members = {f"lib{a}.a": [f"m{a}_{k}.o" for k in range(rng.randint(1, 4))]
               for a in range(n_ar)}
    units = ["main.o", *[f"o{k}.o" for k in range(n_obj)],
             *[m for ms in members.values() for m in ms]]
    uid = {name: i for i, name in enumerate(units)}
    sources = {}
    for name in units:
        others = [u for u in units if u != name and rng.random() < 0.25]
        refs = [(f"u{uid[o]}", rng.random() < 0.2) for o in others]
        extra = ([".global _start", "_start:", ".word 0x7777"] if name == "main.o" else [])
        acts = {s: rng.choices(ACTIONS, WEIGHTS)[0] for s in SHARED if rng.random() < 0.45}
        sources[name] = unit_source(uid[name], acts, refs, rng, extra)
    wrapped = rng.choice(SHARED) if rng.random() < 0.25 else None
    if wrapped:                                  # --wrap: wrappers and __real_ references
        for name in rng.sample(units, min(len(units), rng.randint(1, 2))):
            bind = ".weak" if rng.random() < 0.2 else ".global"
            sources[name] += (f"\n.text\n{bind} __wrap_{wrapped}\n.type __wrap_{wrapped},%function"
                              f"\n__wrap_{wrapped}: .word {0x1000 * (uid[name] + 1) + 9:#x}"
                              f"\n.size __wrap_{wrapped},4")
            if rng.random() < 0.7:
                sources[name] += f"\n.word __real_{wrapped}"
        for name in rng.sample(units, rng.randint(0, 1)):
            sources[name] += f"\n.text\n.word __real_{wrapped}"
    objs = units[1:1 + n_obj]
    items = [[n] for n in units[:1 + n_obj]] + [[a] for a in members]
    rng.shuffle(items)
    if rng.random() < 0.5:
        items.sort(key=lambda it: it != ["main.o"])
    if rng.random() < 0.25 and objs:                          # some objects as --start-lib
        lazy = [it for it in items if it[0] in objs and rng.random() < 0.7]
        for it in lazy:
            it[:] = ["--start-lib", *it, "--end-lib"]
        for a, b in zip(items, items[1:]):                    # join neighbours into one lib
            if a[-1] == "--end-lib" and b[0] == "--start-lib" and rng.random() < 0.7:
                a.pop()
                b.pop(0)
    if rng.random() < 0.2:                                    # --whole-archive
        k = rng.choice([i for i, it in enumerate(items) if it[-1].endswith(".a")])
        items[k] = ["--whole-archive", items[k][-1], "--no-whole-archive"]
    if rng.random() < 0.25:                                   # repeat an archive later
        items.insert(rng.randint(0, len(items)), [rng.choice(list(members))])
    if rng.random() < 0.05 and objs:                          # an object listed twice
        items.insert(rng.randint(0, len(items)), [rng.choice(objs)])
    for k, it in enumerate(items):                            # some archives found by -l
        if it[-1].endswith(".a") and len(it) == 1 and rng.random() < 0.15:
            items[k] = ["-l" + it[-1][3:-2]]
    if rng.random() < 0.3 and len(items) > 1:                 # a group (lld: backrefs only)
        i = rng.randrange(len(items) - 1)
        j = rng.randrange(i + 1, len(items))
        if not any("--start-lib" in it or "--end-lib" in it for it in items[i:j + 1]):
            items[i] = ["--start-group", *items[i]]
            items[j] = [*items[j], "--end-group"]
    if rng.random() < 0.25:                                   # -u, anywhere
        sym = rng.choice([*SHARED, *[f"u{uid[u]}" for u in units]])
        items.insert(rng.randint(0, len(items)), ["-u", sym])
    if rng.random() < 0.15:                                   # --defsym, anywhere
        items.insert(rng.randint(0, len(items)), ["--defsym", f"{rng.choice(SHARED)}=0x40"])
    if rng.random() < 0.1:
        items.insert(0, rng.choice([["-z", "muldefs"], ["--allow-multiple-definition"]]))
    if rng.random() < 0.3:
        items.insert(0, ["--warn-backrefs"])
    if wrapped:
        items.insert(rng.randint(0, len(items)), rng.choice(
            [[f"--wrap={wrapped}"], ["--wrap", wrapped]]))
    if rng.random() < 0.3:
        items.insert(rng.randint(0, len(items)), ["--gc-sections"])
    args = [a for it in items for a in it]
    thin = frozenset(a for a in members if rng.random() < 0.15)
    return Generated(root, sources, members, ["-e", "_start", "-L", ".", *args], thin)


def compare(root: Path, args: list[str], messages: bool = True) -> list[str]:
    """Differences between the lld model and ld.lld-16 (resolve/lld/oracle.py)."""
    run = run_lld(args, root)
    state, model = resolve(args, cwd=str(root))
    return differences(model, run, state, messages=messages)
