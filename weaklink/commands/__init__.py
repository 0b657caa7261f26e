"""The `weaklink` subcommands, one module each (see weaklink.cli)."""
