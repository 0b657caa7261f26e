"""Parse a GNU ld command line into what resolution needs: positional inputs, global roots.

Which options ld 2.40 has, their arity and what each does to resolution is data:
weaklink/data/gnu_ld_options.txt, read by ldoptions.py. Inputs keep their command-line order
(ld processes them left to right). `-u`, `-e`, `--require-defined` and a `-T` script's
ENTRY/EXTERN are global: ld enters them as undefined before reading any file
(docs/linker-semantics.md §2.1 item 8). `--defsym` is positional (§3.4). `--wrap`,
`--gc-sections`, `--cref`, `-m` and the options deciding how unresolved symbols are reported
are kept for the passes that use them. Options with no effect on resolution are accepted and
listed (LinkOptions.no_effect); an option the model does not follow stops the parse with one
line, so a prediction is never silently made for a link we do not model.
"""
from __future__ import annotations

from collections import namedtuple

from weaklink.errors import UsageError
from weaklink.resolve import ldoptions, response_files


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


# An option with no effect on resolution: as given, and ld's help text (its JSON record).
NoEffect = namedtuple("NoEffect", "option help")


class LinkOptions(namedtuple(
        "LinkOptions", "inputs undefined entry require_defined muldefs search_dirs scripts "
        "trace nostdlib gc_sections demangle wrap cref print_gc emulation plugin init fini output "
        "unresolved ignore_unresolved no_warnings noinhibit fatal_warnings no_effect",
        defaults=((), None, (), False, (), (), (), False, False, True, (), False, False, None,
                  False, "_init", "_fini", "a.out", "error", (), False, False, False, ()))):
    """The options of one ld command line. demangle: ld prints C++ names demangled unless
    --no-demangle; wrap: --wrap=SYM (wrap.py); cref: --cref, ld notices every symbol
    (notice_all), which -y sees; emulation: -m EMULATION, which chooses ld's default script;
    plugin: -plugin, ld loads a plugin (rules.py: ld/plugin.c notices); init, fini: -init /
    -fini, the DT_INIT/DT_FINI names, --gc-sections roots; output: -o, ld's own definitions
    in the output are listed under it. unresolved: how undefined references are reported,
    "error" | "warning" | "ignore" (--unresolved-symbols, -z defs/undefs,
    --warn/--error-unresolved-symbols); ignore_unresolved: --ignore-unresolved-symbol names;
    no_warnings: -w, ld prints no diagnostic and exits 0; noinhibit: --noinhibit-exec, ld
    exits 0 after printing its errors; fatal_warnings: a warning fails the link; no_effect:
    a NoEffect for every option with no effect on resolution."""
    __slots__ = ()


class _State:
    """The command line read so far: the input stack (a group opens a level) and the
    options, as LinkOptions will hold them."""

    def __init__(self, lld: bool = False):
        self.stack: list = [[]]
        self.whole = False
        self.pushed: list = []          # --push-state: saved --whole-archive states
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
        self.report_unresolved = True   # --unresolved-symbols, -z defs/undefs (ldmain.c)
        self.warn_unresolved = False    # --warn-unresolved-symbols / --error-...
        self.ignore_unresolved: list = []
        self.no_warnings = self.noinhibit = self.fatal_warnings = False
        self.no_effect: list = []
        self.lld = lld              # accept lld's --start-lib / --end-lib
        self.lib = 0                # inside the n-th --start-lib block (0: outside)
        self.libs = 0

    def add(self, kind: str, arg: str = "", **kw) -> None:
        self.stack[-1].append(InputItem(kind, arg, self.whole, lazy=self.lib, **kw))


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


def _start_group(st: _State, _v) -> None:
    if st.lib:
        raise UsageError("may not nest --start-group in --start-lib")
    st.stack.append([])


def _end_group(st: _State, _v) -> None:
    if len(st.stack) == 1:
        raise UsageError("--end-group without --start-group")
    children = tuple(st.stack.pop())
    st.stack[-1].append(InputItem("group", children=children))


def _pop_state(st: _State, _v) -> None:
    if not st.pushed:
        raise UsageError("--pop-state: no state pushed before popping")
    st.whole = st.pushed.pop()


def _script(st: _State, v: str) -> None:
    st.scripts.append(v)
    st.stack[-1].append(InputItem("script", v))


def _unresolved_symbols(st: _State, v: str) -> None:
    # ld/lexsup.c: ignore-all and ignore-in-object-files stop the object-file reports;
    # report-all and ignore-in-shared-libs keep them (no shared libraries here)
    if v not in ("ignore-all", "report-all", "ignore-in-object-files", "ignore-in-shared-libs"):
        raise UsageError(f"--unresolved-symbols={v}: expected ignore-all, report-all, "
                         "ignore-in-object-files or ignore-in-shared-libs")
    st.report_unresolved = v in ("report-all", "ignore-in-shared-libs")


def _set(name: str, value):
    return lambda st, _v: setattr(st, name, value)


def _store(name: str):
    return lambda st, v: setattr(st, name, v)


def _append(name: str):
    return lambda st, v: getattr(st, name).append(v)


# What each `modelled` row of the table does, by the row's first name.
_ACTIONS = {
    "-l": lambda st, v: st.add("library", v),
    "-L": _append("dirs"),
    "-(": _start_group,
    "-)": _end_group,
    "--whole-archive": _set("whole", True),
    "--no-whole-archive": _set("whole", False),
    "--push-state": lambda st, _v: st.pushed.append(st.whole),
    "--pop-state": _pop_state,
    "-T": _script,
    "-dT": _script,
    "-nostdlib": _set("nostdlib", True),
    "-m": _store("emulation"),
    "-plugin": _set("plugin", True),
    "-e": _store("entry"),
    "-u": _append("undefined"),
    "--require-defined": _append("require"),
    "--defsym": lambda st, v: st.stack[-1].append(_defsym(v)),
    "-y": _append("trace"),
    "--wrap": _append("wrap"),
    "--allow-multiple-definition": _set("muldefs", True),
    "-z muldefs": _set("muldefs", True),
    "-init": _store("init"),
    "-fini": _store("fini"),
    "--cref": _set("cref", True),
    "--demangle": _set("demangle", True),
    "--no-demangle": _set("demangle", False),
    "-o": _store("output"),
    "--gc-sections": _set("gc_sections", True),
    "--no-gc-sections": _set("gc_sections", False),
    "--print-gc-sections": _set("print_gc", True),
    "--no-print-gc-sections": _set("print_gc", False),
    "--warn-unresolved-symbols": _set("warn_unresolved", True),
    "--error-unresolved-symbols": _set("warn_unresolved", False),
    "--unresolved-symbols": _unresolved_symbols,
    "--ignore-unresolved-symbol": _append("ignore_unresolved"),
    "--no-undefined": _set("report_unresolved", True),
    "-z defs": _set("report_unresolved", True),
    "-z undefs": _set("report_unresolved", False),
    "--noinhibit-exec": _set("noinhibit", True),
    "-w": _set("no_warnings", True),
    "--fatal-warnings": _set("fatal_warnings", True),
    "--no-fatal-warnings": _set("fatal_warnings", False),
}


def _apply(st: _State, m: ldoptions.Match) -> None:
    opt = m.option
    given = " ".join(m.words)
    if opt.resolution == "modelled":
        if opt.key != "-z":          # -z alone is never the match: its keyword row is
            _ACTIONS[opt.key](st, m.value)
    elif opt.resolution == "none":
        st.no_effect.append(NoEffect(given, opt.note))
    elif opt.resolution == "refused":
        raise UsageError(f"ld option '{given}' is not modelled: {opt.note}")
    else:
        raise UsageError(f"ld option '{given}': {opt.note}; ld prints it and exits "
                         "without linking")


def _lld_lib(st: _State, arg: str) -> None:
    if bool(st.lib) == (arg == "--start-lib"):
        raise UsageError(f"{'nested' if st.lib else 'stray'} {arg}")
    if len(st.stack) > 1:
        raise UsageError("may not nest --start-lib in --start-group")
    st.libs += arg == "--start-lib"
    st.lib = st.libs if arg == "--start-lib" else 0


def expand_response_files(args: list[str], cwd: str | None = None) -> list[str]:
    """`@FILE` arguments (as the gcc driver passes long command lines) read as more arguments,
    by ld's rules (response_files.py)."""
    return response_files.expand(args, cwd)


def _unresolved(st: _State) -> str:
    if not st.report_unresolved:
        return "ignore"
    return "warning" if st.warn_unresolved else "error"


def parse(args: list[str], *, lld: bool = False, cwd: str | None = None) -> LinkOptions:
    """Parse ld arguments (@FILE read from `cwd`); raise UsageError for an option ld does not
    have or the model does not follow. `lld` also accepts --start-lib/--end-lib (the files
    between them come out `lazy`)."""
    args = expand_response_files(args, cwd)
    st = _State(lld=lld)
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-") or arg == "-":
            st.add("file", arg)
            i += 1
        elif arg == "--":               # getopt: every later argument is an input
            for rest in args[i + 1:]:
                st.add("file", rest)
            break
        elif lld and arg in ("--start-lib", "--end-lib"):
            _lld_lib(st, arg)
            i += 1
        else:
            m = ldoptions.match(args, i)
            if m is None:
                raise UsageError(f"unrecognized ld option '{arg}'")
            _apply(st, m)
            i = m.next
    if len(st.stack) != 1:
        raise UsageError("--start-group without --end-group")
    return LinkOptions(tuple(st.stack[0]), tuple(st.undefined), st.entry, tuple(st.require),
                       st.muldefs, tuple(st.dirs), tuple(st.scripts), tuple(st.trace),
                       st.nostdlib, st.gc_sections, st.demangle, tuple(st.wrap), st.cref,
                       st.print_gc, st.emulation, st.plugin, st.init, st.fini, st.output,
                       _unresolved(st), tuple(st.ignore_unresolved), st.no_warnings,
                       st.noinhibit, st.fatal_warnings, tuple(st.no_effect))
