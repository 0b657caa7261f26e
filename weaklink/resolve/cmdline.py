"""Parse a GNU ld command line into what resolution needs: positional inputs, global roots.

Inputs keep their command-line order (ld processes them left to right). `-u`, `-e`,
`--require-defined` and a `-T` script's ENTRY/EXTERN are global: ld enters them as undefined
before reading any file (docs/linker-semantics.md §2.1 item 8). `--defsym` is positional (§3.4).
`--wrap`, `--gc-sections`, `--cref` and `-m` are kept for the passes that use them.
Options that cannot change which definition wins are accepted and ignored; anything else is
a UsageError, so a prediction is never silently made for a link we do not model.
"""
from __future__ import annotations

import shlex
from collections import namedtuple

from weaklink.errors import UsageError

# Options with no argument that do not affect resolution.
IGNORED_FLAGS = frozenset("""
--gc-sections --no-gc-sections --print-gc-sections --no-print-gc-sections -nostdlib --cref -g
-EL -EB --print-memory-usage --no-print-memory-usage -static -Bstatic -dn -non_shared -s -S
--strip-all --strip-debug -x -X --discard-all --discard-locals -t --trace -M --print-map
--verbose --no-warn-mismatch --no-warn-rwx-segments --warn-rwx-segments --warn-common
--no-warn-execstack --warn-execstack --relax --no-relax --sort-common --no-enum-size-warning
--no-wchar-size-warning --check-sections --no-check-sections --stats --as-needed
--no-as-needed --eh-frame-hdr --build-id -q --emit-relocs --print-map-discarded
--no-print-map-discarded --warn-once --fix-cortex-m3-ldrd
--no-fix-cortex-m3-ldrd -N -n --omagic --nmagic --no-omagic --use-blx --pic-veneer
--long-plt --no-apply-dynamic-relocs --fatal-warnings --no-fatal-warnings --warn-section-align
--no-undefined-version --undefined-version --enable-non-contiguous-regions --no-dynamic-linker
--ignore-unresolved-symbol --warn-unresolved-symbols --error-unresolved-symbols
--fix-v4bx --fix-v4bx-interworking --fix-stm32l4xx-629360 --no-merge-exidx-entries
--stub-group-size --ld-generated-unwind-info --no-ld-generated-unwind-info
--color-diagnostics --no-color-diagnostics -Bno-symbolic -Bdynamic --no-warnings -w --noinhibit-exec
""".split())
# Options taking a value (`--opt=V`, `--opt V`, or `-oV` for one-letter ones), ignored.
IGNORED_WITH_VALUE = frozenset("""
-o --output -Map -m -A --architecture -O -Ttext -Tdata -Tbss -Ttext-segment
--section-start --sort-section --target2 --sysroot --build-id --hash-style
-plugin-opt --oformat -b --format -R --just-symbols -Y --stub-group-size --thumb-entry
--vfp11-denorm-fix --fix-stm32l4xx-629360 --orphan-handling --exclude-libs
--print-memory-usage-file --dependency-file --error-handling-script
--image-base --max-cache-size --plugin-opt -a --retain-symbols-file
""".split())
ONE_LETTER_VALUE = ("-o", "-T", "-m", "-A", "-O", "-b", "-R", "-Y", "-a")
UNSUPPORTED = {
    "-r": "relocatable links (-r) are not modelled",
    "--relocatable": "relocatable links (-r) are not modelled",
    "-shared": "shared libraries are not modelled",
    "--shared": "shared libraries are not modelled",
    "-pie": "PIE links are not modelled",
    "--unresolved-symbols": "--unresolved-symbols is not modelled",
    "--defsym-file": "not modelled",
}


class InputItem(namedtuple("InputItem", "kind arg whole value children lazy",
                           defaults=("", False, 0, (), 0))):
    """One positional input: kind is 'file', 'library', 'defsym', 'script' (a -T script's
    assignments, at its place), 'group'. lazy: lld --start-lib ... --end-lib: an object
    loaded like a member; the number of its --start-lib block (0: not lazy)."""
    __slots__ = ()


def flat(items):
    """The items of a command line in order, with each group's children in its place."""
    for item in items:
        if item.kind == "group":
            yield from flat(item.children)
        else:
            yield item


class LinkOptions(namedtuple(
        "LinkOptions", "inputs undefined entry require_defined muldefs search_dirs scripts "
        "trace nostdlib gc_sections demangle wrap cref print_gc emulation plugin init fini output",
        defaults=((), None, (), False, (), (), (), False, False, True, (), False, False, None,
                  False, "_init", "_fini", "a.out"))):
    """The options of one ld command line. demangle: ld prints C++ names demangled unless
    --no-demangle; wrap: --wrap=SYM (wrap.py); cref: --cref, ld notices every symbol
    (notice_all), which -y sees; emulation: -m EMULATION, which chooses ld's default script;
    plugin: -plugin, ld loads a plugin (rules.py: ld/plugin.c notices); init, fini: -init /
    -fini, the DT_INIT/DT_FINI names, --gc-sections roots; output: -o, ld's own definitions
    in the output are listed under it."""
    __slots__ = ()


class _State:
    """The command line read so far: the input stack (a group opens a level) and the
    options, as LinkOptions will hold them."""

    def __init__(self, lld: bool = False):
        self.stack: list = [[]]
        self.whole = False
        self.undefined: list = []
        self.require: list = []
        self.dirs: list = []
        self.scripts: list = []
        self.trace: list = []
        self.entry: str | None = None
        self.muldefs = self.nostdlib = self.gc_sections = False
        self.demangle = True
        self.wrap: list = []
        self.cref = self.print_gc = self.plugin = False
        self.emulation: str | None = None
        self.init, self.fini, self.output = "_init", "_fini", "a.out"
        self.lld = lld              # accept lld's --start-lib / --end-lib
        self.lib = 0                # inside the n-th --start-lib block (0: outside)
        self.libs = 0


def option_value(arg: str, args: list[str], i: int, names: tuple[str, ...]) -> tuple[str | None, int]:
    """Value of option `arg` if it is one of `names` (`--x=V`, `--x V`, `-xV`); else None."""
    for name in names:
        if arg == name:
            if i + 1 >= len(args):
                raise UsageError(f"option '{name}' requires an argument")
            return args[i + 1], i + 2
        if arg.startswith(name + "="):
            return arg[len(name) + 1:], i + 1
        if len(name) == 2 and arg.startswith(name) and len(arg) > 2:
            return arg[2:], i + 1
    return None, i


def _defsym(text: str) -> InputItem:
    name, eq, expr = text.partition("=")
    if not eq or not name:
        raise UsageError(f"--defsym {text!r}: expected SYMBOL=VALUE")
    try:
        value = int(expr.strip(), 0)
    except ValueError:
        raise UsageError(f"--defsym {text!r}: only numeric values are modelled") from None
    return InputItem("defsym", name.strip(), value=value)


def _valued(st: _State, arg: str, args: list[str], i: int) -> int | None:
    """Handle an option with a value; return the next index, or None if not one."""
    table = (
        (("-l", "--library"), lambda v: st.stack[-1].append(
            InputItem("library", v, st.whole, lazy=st.lib))),
        (("-L", "--library-path"), st.dirs.append),
        (("-u", "--undefined"), st.undefined.append),
        (("--require-defined",), st.require.append),
        (("-e", "--entry"), lambda v: setattr(st, "entry", v)),
        (("--defsym",), lambda v: st.stack[-1].append(_defsym(v))),
        (("-y", "--trace-symbol"), st.trace.append),
        (("--wrap", "-wrap"), st.wrap.append),
        (("-m",), lambda v: setattr(st, "emulation", v)),
        (("-plugin", "--plugin"), lambda v: setattr(st, "plugin", True)),
        (("-init", "--init"), lambda v: setattr(st, "init", v)),
        (("-fini", "--fini"), lambda v: setattr(st, "fini", v)),
        (("-o", "--output"), lambda v: setattr(st, "output", v)),
        (("-T", "--script", "-dT", "--default-script"), lambda v: (
            st.scripts.append(v), st.stack[-1].append(InputItem("script", v)))),
    )
    long_names = tuple(n for n in IGNORED_WITH_VALUE if len(n) > 2)
    value, j = option_value(arg, args, i, long_names)
    if value is not None:
        return j
    for names, act in table:
        value, j = option_value(arg, args, i, names)
        if value is not None:
            act(value)
            return j
    if arg.startswith("-z"):
        value, j = option_value(arg, args, i, ("-z",))
        if value == "muldefs":
            st.muldefs = True
        return j
    value, j = option_value(arg, args, i, ONE_LETTER_VALUE)
    return j if value is not None else None


def _flag(st: _State, arg: str) -> bool:
    norm = "--" + arg.lstrip("-")
    if arg in ("--start-group", "-("):
        if st.lib:
            raise UsageError("may not nest --start-group in --start-lib")
        st.stack.append([])
    elif arg in ("--end-group", "-)"):
        if len(st.stack) == 1:
            raise UsageError("--end-group without --start-group")
        children = tuple(st.stack.pop())
        st.stack[-1].append(InputItem("group", children=children))
    elif st.lld and arg in ("--start-lib", "--end-lib"):
        if bool(st.lib) == (arg == "--start-lib"):
            raise UsageError(f"{'nested' if st.lib else 'stray'} {arg}")
        if len(st.stack) > 1:
            raise UsageError("may not nest --start-lib in --start-group")
        st.libs += arg == "--start-lib"
        st.lib = st.libs if arg == "--start-lib" else 0
    elif arg == "--whole-archive":
        st.whole = True
    elif arg == "--no-whole-archive":
        st.whole = False
    elif arg == "--allow-multiple-definition":
        st.muldefs = True
    elif arg in ("-nostdlib", "--nostdlib"):
        st.nostdlib = True
    elif arg in ("--gc-sections", "-gc-sections"):
        st.gc_sections = True
    elif arg in ("--no-gc-sections", "-no-gc-sections"):
        st.gc_sections = False
    elif arg == "--demangle" or arg.startswith("--demangle="):
        st.demangle = True
    elif arg == "--no-demangle":
        st.demangle = False
    elif arg in ("--cref", "-cref"):
        st.cref = True
    elif arg in ("--print-gc-sections", "-print-gc-sections"):
        st.print_gc = True
    elif arg in IGNORED_FLAGS or norm in IGNORED_FLAGS:
        pass
    else:
        return False
    return True


def expand_response_files(args: list[str], depth: int = 0) -> list[str]:
    """`@FILE` arguments (as the gcc driver passes long command lines) read as more arguments."""
    out = []
    for arg in args:
        if not arg.startswith("@") or len(arg) == 1:
            out.append(arg)
            continue
        if depth > 8:
            raise UsageError(f"{arg}: response files nested too deeply")
        try:
            with open(arg[1:]) as f:
                text = f.read()
        except OSError:
            out.append(arg)              # ld, too, treats an unreadable @FILE as a file name
            continue
        out += expand_response_files(shlex.split(text), depth + 1)
    return out


def parse(args: list[str], *, lld: bool = False) -> LinkOptions:
    """Parse ld arguments; raise UsageError for an unknown or unsupported option. `lld` also
    accepts --start-lib/--end-lib (the files between them come out `lazy`)."""
    args = expand_response_files(args)
    st = _State(lld=lld)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-") or arg == "-":
            st.stack[-1].append(InputItem("file", arg, st.whole, lazy=st.lib))
            i += 1
            continue
        key = arg.split("=", 1)[0]
        if key in UNSUPPORTED:
            raise UsageError(f"option '{key}': {UNSUPPORTED[key]}")
        if _flag(st, arg):
            i += 1
            continue
        j = _valued(st, arg, args, i)
        if j is None:
            raise UsageError(f"unrecognized ld option '{arg}'")
        i = j
    if len(st.stack) != 1:
        raise UsageError("--start-group without --end-group")
    return LinkOptions(tuple(st.stack[0]), tuple(st.undefined), st.entry, tuple(st.require),
                       st.muldefs, tuple(st.dirs), tuple(st.scripts), tuple(st.trace),
                       st.nostdlib, st.gc_sections, st.demangle, tuple(st.wrap), st.cref,
                       st.print_gc, st.emulation, st.plugin, st.init, st.fini, st.output)
