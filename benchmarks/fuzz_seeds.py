"""The fuzz seeds (real fixture outputs) and, per input kind, the command lines that read them.

In each command line "{}" stands for the mutated file; the other inputs are good fixtures.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from weaklink import toolchain
from weaklink.builders import firmware as fixtures, release as fixtures_release

NPU_TARGET = ("--accelerator", "ethos-u85-256", "--system-config", "Ethos_U85_SYS_DRAM_Mid",
              "--memory-mode", "Dedicated_Sram_384KB")
U55_TARGET = ("--accelerator", "ethos-u55-128", "--system-config", "Ethos_U55_High_End_Embedded",
              "--memory-mode", "Shared_Sram")
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Entry:
    files: list[Path]
    commands: list[tuple[str, ...]] = field(default_factory=list)
    rejected: tuple[Path, ...] = ()     # seeds that are bad input as they are (exit 2, as ld)


@dataclass
class Seeds:
    kinds: dict[str, Entry]


def _bsd_archive(members: list[Path], out: Path) -> Path:
    """A BSD-format archive (`#1/N` names, a `__.SYMDEF` member) of `members`. GNU ld 2.40 for
    arm-none-eabi finds no index in it ("archive has no index; run ranlib to add one"), and
    so must weaklink: the seed is bad input as it is, and its mutants exercise the headers."""
    def header(name: str, size: int) -> bytes:
        return (f"{name:<16}{0:<12}{0:<6}{0:<6}{644:<8}{size:<10}".encode() + b"`\n")

    body = b""
    for m in members:
        name = m.name.encode()
        data = name + m.read_bytes()
        body += header(f"#1/{len(name)}", len(data)) + data + (b"\n" if len(data) & 1 else b"")
    symdef = struct.pack("<I", 8) + struct.pack("<II", 0, 8) + struct.pack("<I", 4) + b"sym\0"
    symdef = b"__.SYMDEF\0\0\0" + symdef
    out.write_bytes(b"!<arch>\n" + header("#1/12", len(symdef)) + symdef + body)
    return out


def build_seeds(work: Path, cache: str | None = None) -> Seeds:
    work.mkdir(parents=True, exist_ok=True)
    outcomes = {o.variant.name: o for o in fixtures.build(cache=cache)}
    weak = outcomes["weak-example-u85"]
    root = weak.cwd
    elf, map_ = root / weak.elf, root / weak.map
    u55 = outcomes["weak-custom-u55"]
    other = outcomes["weak-custom-u85"]          # the image `diff` compares against
    archived = outcomes["weak-override-in-archive-u85"]
    models = fixtures.cache_dir(cache) / "models"
    u85_model = models / "tiny__ethos-u85-256__Ethos_U85_SYS_DRAM_Mid__Dedicated_Sram_384KB"
    blob = Path(f"{u85_model}.bin")
    npz = u85_model / "tiny_vela.npz"

    def absolute(args) -> list[str]:
        out = []
        for a in args:
            p = root / a
            out.append(str(p) if not a.startswith("-") and p.exists() else a)
        return out

    link_args = absolute(weak.ld_args)
    script = link_args[link_args.index("-T") + 1]
    objects = [a for a in link_args if a.endswith(".o")]
    archive_args = absolute(archived.ld_args)
    gnu_lib = next(a for a in archive_args if a.endswith("librunner_overrides.a"))
    thin = work / "libthin.a"
    members = [Path(a) for a in archive_args if a.endswith(".o")][:2]
    toolchain.run("ar", ["rcsT", str(thin), *map(str, members)], cwd=work)
    bsd = _bsd_archive([Path(o) for o in objects[:2]], work / "libbsd.a")
    check = ("weaklink", "check", str(elf), *NPU_TARGET)

    def swap(args: list[str], old: str) -> tuple[str, ...]:
        return ("weaklink", "link", *(("{}" if a == old else a) for a in args))

    # link predicts, it never writes; -Map and -o go anyway so that nothing could be written
    no_out = [a for a in link_args if a not in ("-Map", "-o", "--cref") and not a.endswith((".map", ".elf"))]
    arch_no_out = [a for a in archive_args
                   if a not in ("-Map", "-o", "--cref") and not a.endswith((".map", ".elf"))]

    kinds = {
        "elf": Entry([elf, root / u55.elf], [
            ("weaklink", "analyze", "--json", "{}"),
            ("weaklink", "analyze", "{}", "--map", str(map_), "--symbol", "ethosu_fast_scratch"),
            ("weaklink", "check", "{}", *NPU_TARGET, "--map", str(map_)),
            ("weaklink", "diff", str(root / other.elf), "{}", "--github"),
            ("weaklink", "diff", "{}", str(elf), "--map-new", str(map_), "--symbol", "ethosu_fast_scratch"),
        ]),
        "map": Entry([map_, root / archived.map, root / u55.map], [
            ("weaklink", "analyze", "--json", str(elf), "--map", "{}"),
            (*check, "--map", "{}"),
            ("weaklink", "diff", "--json", str(root / other.elf), str(elf), "--map-old",
             str(root / other.map), "--map-new", "{}"),
        ]),
        "object": Entry([Path(o) for o in objects], [
            swap(no_out, objects[1]),
            ("weaklink", "link", "--json", "--why-not", "ethosu_fast_scratch", *no_out, "{}"),
        ]),
        "archive": Entry([Path(gnu_lib), thin, bsd], [
            ("weaklink", "link", "--why-extract", *arch_no_out, "{}"),
            swap(arch_no_out, gnu_lib),
        ], rejected=(bsd,)),
        "npz": Entry([npz], [("npu", "decode", "{}"), ("npu", "run", "{}", *NPU_TARGET),
                            (*check, "--model", "{}")]),
        "blob": Entry([blob], [("npu", "decode", "--json", "{}"), ("npu", "run", "{}", *NPU_TARGET),
                              (*check, "--model", "{}")]),
        "binding": Entry([REPO / "weaklink/data/bindings/executorch-arm.toml"],
                         [(*check, "--binding", "{}")]),
        "vela.ini": Entry([REPO / "npu/data/vela.ini"], [
            ("npu", "run", str(blob), *NPU_TARGET, "--vela-ini", "{}"),
            (*check, "--vela-ini", "{}"),
        ]),
        "script": Entry([Path(script)], [swap(no_out, script)]),
    }
    # ld.lld-16's map (weaklink.read.lldmap) beside its own image, when lld is installed
    try:
        from weaklink.resolve.lld.oracle import lld_path
        lld_path()
        (lld,) = fixtures.build([weak.variant], cache=cache, linker="lld")
    except Exception:                                   # lld not installed: GNU maps only
        lld = None
    if lld is not None and lld.ok:
        kinds["lld-map"] = Entry([root / lld.map], [
            ("weaklink", "analyze", "--json", str(root / lld.elf), "--map", "{}"),
        ])
    # The functional engine on a U55 compile and on U85 ones (Dedicated_Sram_384KB: default weight
    # streams staged by DMA; Sram_Only: fast-format and default streams): it writes to {out}
    u55_model = models / "tiny__ethos-u55-128__Ethos_U55_High_End_Embedded__Shared_Sram"
    fixtures.model_blob("u55", cache)
    import numpy as np
    x = work / "input0.npy"        # the tiny network's one int8 input, NHWC 1x32x32x8
    np.save(x, np.random.default_rng(13).integers(-128, 128, (1, 32, 32, 8), dtype=np.int8))
    kinds["functional"] = Entry([Path(f"{u55_model}.bin"), u55_model / "tiny_vela.npz"], [
        ("npu", "run", "{}", *U55_TARGET, "--functional", "--input", str(x), "--outputs", "{out}"),
    ])
    u85 = fixtures.TARGETS["u85"]
    sram_only = Path(fixtures._model_generator().build_blob("tiny", u85.accelerator, u85.system_config,
                                                            "Sram_Only", models))
    u85_run = ("npu", "run", "{}", "--accelerator", u85.accelerator, "--system-config", u85.system_config)
    kinds["functional-u85"] = Entry([blob, sram_only], [
        (*u85_run, "--memory-mode", u85.memory_mode, "--functional", "--input", str(x), "--outputs", "{out}"),
        (*u85_run, "--memory-mode", "Sram_Only", "--functional", "--input", str(x), "--outputs", "{out}"),
    ])
    # Vela's default .tflite output (npu's tflite reader): one ethos-u operator, and two
    generator = fixtures._model_generator()
    t = fixtures.TARGETS["u85"]
    tflite = [Path(generator.build_tflite(net, t.accelerator, t.system_config, t.memory_mode, models))
              for net in ("tiny", "split")]
    kinds["tflite"] = Entry(tflite, [("npu", "decode", "{}"), ("npu", "run", "{}", *NPU_TARGET),
                                     ("npu", "run", "--op", "1", "{}", *NPU_TARGET)],
                            rejected=(tflite[0],))      # tiny has no operator 1
    # Images over 1 MiB, read through a memory map: the Release-shaped C++ runners (no DWARF,
    # -fPIC with a GOT, one linked with --emit-relocs), and their >= 1.0 layout blob
    release = {i.variant.name: i for i in fixtures_release.build(cache=cache)}
    big, big_u55 = release["release-u85"], release["release-u55"]
    kinds["large-elf"] = Entry([big.elf, big.relocs_elf], [
        ("weaklink", "analyze", "--json", "{}"),
        ("weaklink", "check", "{}", *NPU_TARGET, "--map", str(big.map)),
        ("weaklink", "diff", str(release["release-u85-weak"].elf), "{}"),
    ])
    kinds["large-elf-u55"] = Entry([big_u55.elf, big_u55.relocs_elf], [
        ("weaklink", "check", "{}", *U55_TARGET, "--functional", "--json"),
    ])
    kinds["blob"].files.append(big.blob)
    kinds["object"].commands.append(("weaklink", "check", str(big.elf), *NPU_TARGET,
                                     "--link-input", "{}"))
    return Seeds(kinds)
