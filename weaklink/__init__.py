"""weaklink: GNU ld symbol resolution, firmware ELF analysis and Ethos-U base-address binding.

Public API: `weaklink.resolve.link(args, cwd=...) -> LinkResult` (the resolution model) and
`weaklink.resolve.link_driver(["arm-none-eabi-gcc", ...], cwd=...)` for a compiler-driver line;
each stage is a subpackage (read, resolve, analyze, bind, check, run), imported where it is used.
"""

__version__ = "0.1.0"
