"""`python -m weaklink.analyze ARGS` = `weaklink analyze ARGS`, without importing the other
subcommands (a lean entry point for scripts and CI loops that run analyze many times)."""
from __future__ import annotations

import sys

from weaklink.cli import _Parser
from weaklink.commands import analyze as command
from weaklink.errors import InputError, ToolchainMissing, UsageError


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="weaklink")
    command.add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    args = parser.parse_args(["analyze", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.run(args)
    except (InputError, UsageError, ToolchainMissing) as exc:
        print(f"weaklink: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
