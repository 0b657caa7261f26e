"""weaklink: GNU ld symbol resolution, firmware ELF analysis and Ethos-U base-address binding.

Public API: `weaklink.link(args, cwd=...) -> LinkResult` (the resolution model) and
`weaklink.link_driver(["arm-none-eabi-gcc", ...], cwd=...)` for a compiler-driver line, imported on
first use so that the command line starts without loading every stage.
"""

__version__ = "0.1.0"
__all__ = ["link", "link_driver", "LinkResult"]


def __getattr__(name):
    if name in __all__:
        from weaklink import resolve

        return getattr(resolve, name)
    raise AttributeError(f"module 'weaklink' has no attribute {name!r}")
