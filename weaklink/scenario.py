"""Build link scenarios from C or assembly snippets with the cross toolchain, link them with
the real arm-none-eabi-ld, and ask the model the same question — for users' link-order tests.

    sc = Scenario(tmp_path)
    sc.c("main.o", "extern int x; int _start(void) { return x; }")
    sc.c("weak.o", "__attribute__((weak)) int x = 1;")
    sc.c("strong.o", "int x = 5;")
    sc.archive("libs.a", ["strong.o"])
    args = ["-e", "_start", "main.o", "weak.o", "libs.a"]
    sc.link(args).symbols["x"].file              # the model: 'weak.o' (blocked-by-weak)
    sc.ld(args).map.archive_members              # the real ld agrees: () — nothing extracted

Objects from `asm` carry no CPU attributes: link them with each other, not with `c` objects.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

from weaklink import toolchain
from weaklink.resolve import link as model_link
from weaklink.resolve import link_driver as model_link_driver
from weaklink.resolve.gnu.oracle import LdRun, parse_ld_stderr, recorded_run
from weaklink.resolve.lld.oracle import run_lld
from weaklink.resolve.result import LinkResult

__all__ = ["Scenario", "LdRun", "parse_ld_stderr"]


class Scenario:
    """A scratch directory of objects and archives; paths in arguments are relative to it."""

    def __init__(self, root: str | Path, cflags: tuple[str, ...] = ("-Os",)):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.cflags = cflags

    def _check(self, done: toolchain.Completed, what: str) -> None:
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed:\n{done.stderr}")

    def asm(self, name: str, source: str) -> str:
        """Assemble with plain `as` (no CPU attributes: do not mix with .c objects in one link,
        ld rejects the attribute mismatch — a failure the model does not predict)."""
        src = self.root / (name + ".s")
        src.write_text(source + "\n")
        self._check(toolchain.run("as", [src.name, "-o", name], cwd=self.root), f"as {name}")
        return name

    def c(self, name: str, source: str, *flags: str, cxx: bool = False) -> str:
        src = self.root / (name + (".cpp" if cxx else ".c"))
        src.write_text(source + "\n")
        cc = "g++" if cxx else "gcc"
        args = [*toolchain.CPU_FLAGS, *self.cflags, *flags, "-c", src.name, "-o", name]
        self._check(toolchain.run(cc, args, cwd=self.root), f"{cc} {name}")
        return name

    def archive(self, name: str, members: list[str], thin: bool = False) -> str:
        (self.root / name).unlink(missing_ok=True)
        self._check(toolchain.run("ar", ["rcsT" if thin else "rcs", name, *members],
                                  cwd=self.root), f"ar {name}")
        return name

    def link(self, args: list[str], **kw) -> LinkResult:
        """The model's prediction for `arm-none-eabi-ld ARGS`."""
        return model_link(args, cwd=str(self.root), **kw)

    def lld(self, args: list[str]):
        """Run the real ld.lld-16 (weaklink.resolve.lld.oracle.LldRun: exit status, errors in
        lld's wording, the --why-extract rows, the linked image)."""
        return run_lld(args, self.root)

    def link_driver(self, argv: list[str], **kw) -> LinkResult:
        """The model's prediction for a compiler-driver line, e.g.
        `["arm-none-eabi-gcc", "-specs=nosys.specs", "main.o", "libdrv.a"]` (ld_args is set)."""
        return model_link_driver(argv, cwd=str(self.root), **kw)

    def driver(self, argv: list[str], map_name: str = "out.map") -> LdRun:
        """Run the real driver line with -Map, --cref and (with --gc-sections)
        --print-gc-sections passed to ld; output is linked to out.elf unless -o is given."""
        extra = [f"-Wl,-Map,{map_name},--cref,--no-demangle"]
        if any("--gc-sections" in a for a in argv):
            extra.append("-Wl,--print-gc-sections")
        out = [] if "-o" in argv else ["-o", "out.elf"]
        proc = subprocess.run([*argv, *extra, *out], cwd=self.root, capture_output=True,
                              text=True)
        return recorded_run(proc.returncode, proc.stderr, self.root / map_name)

    def ld(self, args: list[str], map_name: str = "out.map") -> LdRun:
        """Run the real ld with -Map and --cref (output discarded); --no-demangle keeps the
        map's names raw, as the model reports them."""
        gc = ["--print-gc-sections"] if "--gc-sections" in args else []
        argv = [toolchain.tool("ld"), "-Map", map_name, "--cref", "--no-demangle",
                "-o", "out.elf", *gc, *args]
        proc = subprocess.run(argv, cwd=self.root, capture_output=True, text=True)
        return recorded_run(proc.returncode, proc.stderr, self.root / map_name)
