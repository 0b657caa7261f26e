"""weaklink: GNU ld symbol resolution, firmware ELF analysis and Ethos-U base-address binding."""

__version__ = "0.1.0"
