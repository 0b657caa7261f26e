"""`weaklink` command line: one subcommand per stage of read → resolve → analyze → bind → emulate.

Each subcommand lives in weaklink/commands/<name>.py and exposes
``add_parser(subparsers)`` and ``run(args) -> int``. Exit codes: 0 success or measured,
1 a check or gate failed, 2 bad input or usage.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from weaklink.cmakedir import CMAKE_DIR
from weaklink.errors import exit_status

# Subcommand modules, in the order of the data flow.
COMMANDS = ("link", "analyze", "check", "diff", "run", "fvp", "demo")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default exits 2 with usage: keep the status, one line
        self.exit(2, f"{self.prog}: error: {message}\n")


class _CMakeDir(argparse.Action):
    """--cmake-dir: print the CMake package's directory and exit, as --version does."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(CMAKE_DIR, flush=True)
        parser.exit(0)


def build_parser(commands=COMMANDS) -> argparse.ArgumentParser:
    parser = _Parser(prog="weaklink", description=__doc__.splitlines()[0])
    parser.add_argument("--cmake-dir", action=_CMakeDir,
                        help="print the directory of weaklink's CMake package (find_package(weaklink "
                             "CONFIG) with -Dweaklink_DIR=...) and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in commands:
        importlib.import_module(f"weaklink.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None, commands=COMMANDS) -> int:
    """Run one subcommand; `commands` limits which subcommand modules are loaded."""
    # No command needs BLAS threads (the functional NPU engine limits BLAS to one thread
    # itself), and OpenBLAS starts a thread per core when numpy is imported (about 40 ms of a
    # command's start-up on 2 cores): one thread, unless the user chose.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in commands:     # load that subcommand's module only (start-up time)
        commands = (argv[0],)
    elif argv and argv[0] == "--cmake-dir":
        commands = ()
    parser = build_parser(commands)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    return exit_status("weaklink", lambda: args.run(args))


def entry() -> None:
    """The `weaklink` console script: main()'s status. A reader that quit before the output
    was flushed (`| head`) gets no error: stdout is pointed at /dev/null, as the Python
    documentation advises for SIGPIPE (signal module), so the exit's flush cannot fail again."""
    status = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(status)

if __name__ == "__main__":
    entry()
