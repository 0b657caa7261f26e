"""What `run` needs to know about the image before it boots it: that it is an Arm image the
board can load, its vector table (the fault handlers to watch, and every symbol at each
handler's address), the driver and exit functions it may watch when their symbols are there,
the WFE and WFI instructions where it may wait for the NPU, and a few unused bytes where the
interrupt stub can live."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from npu.soc import QemuBoard
from weaklink.errors import InputError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.run.irq import wait_sites
# Exception numbers of the fault vectors (Armv8-M): NMI, HardFault, MemManage, BusFault,
# UsageFault, SecureFault.
FAULTS = {2: "NMI", 3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 7: "SecureFault"}
# Optional: where the firmware calls the driver, for the sizes it passes (the NPU never sees them).
INVOKE = "ethosu_invoke_v3"
# Where a C program ends (ISO C 7.22.4.4, POSIX _exit): the status is the first argument, r0
# at the entry (AAPCS). `exit` runs the atexit handlers, then `_exit`; newlib's `_exit` is the
# system's hook (Zephyr's spins, Arm's Corstone platform code prints its exit line and spins,
# semihosting builds call SYS_EXIT).
EXITS = ("exit", "_exit")
STUB_BYTES = 32


@dataclass(frozen=True)
class RunImage:
    path: str
    board: QemuBoard
    initial_sp: int
    reset: int
    handlers: dict[int, int]          # exception number -> handler address (Thumb bit clear)
    functions: dict[str, int] = field(default_factory=dict)     # INVOKE and EXITS: name -> address
    stub: int = 0                     # where the interrupt stub is written
    image: Image | None = None        # its symbols name the PCs
    waits: dict[int, tuple[str, int]] = field(default_factory=dict)   # WFE/WFI: address -> (kind, length)
    handler_names: dict[int, tuple[str, ...]] = field(default_factory=dict)   # handler -> its symbols

    def where(self, pc: int | None) -> str:
        """`pc` as function+offset, when a function symbol covers it."""
        if pc is None:
            return "pc unknown"
        fn = self.image.symbol_at(pc, (S.STT_FUNC,)) if self.image is not None else None
        text = f"pc 0x{pc:08x}"
        return f"{text} ({fn.name}+0x{pc - fn.address:x})" if fn else text


def load(image: Image, board: QemuBoard) -> RunImage:
    """What `run` needs of `image` (read with Image.from_path(..., stripped=True): a stripped
    image boots too, with no name for its PCs)."""
    path, elf = image.name, image.elf
    loads = [p for p in image.load_segments() if p.p_memsz]
    if not loads:
        raise InputError(path, "no loadable segment: nothing to boot")
    for p in loads:
        _in_memory(path, board, p.p_paddr, p.p_filesz, "loads")
        _in_memory(path, board, p.p_vaddr, p.p_memsz, "occupies")
    # Memory the image uses that no PT_LOAD covers: Arm's ethos-u core_platform linker scripts
    # (targets/corstone-300/platform.ld) give .bss, the heap and the stack a PT_NULL header.
    # (.tbss is a template that takes no memory where it is placed: ELF gABI, TLS.)
    for i, s in enumerate(elf.shdrs):
        if s.sh_flags & (S.SHF_ALLOC | S.SHF_TLS) == S.SHF_ALLOC and s.sh_size and not any(
                p.p_vaddr <= s.sh_addr and s.sh_addr + s.sh_size <= p.p_vaddr + p.p_memsz for p in loads):
            _in_memory(path, board, s.sh_addr, s.sh_size, "occupies", f"section {elf.section_name(i)}")
    vectors = _read(elf, loads, board.vector_table, 8 + 4 * max(FAULTS) - 4)
    if vectors is None:
        raise InputError(path, f"no vector table at 0x{board.vector_table:08x}: a {board.soc} image "
                         "boots from there, and no segment loads it")
    words = struct.unpack_from(f"<{len(vectors) // 4}I", vectors)
    sp, reset = words[0], words[1]
    if not reset & 1 or board.memory_at(reset & ~1) is None:
        raise InputError(path, f"reset vector 0x{reset:08x} is not a Thumb address in "
                         f"{board.machine}'s memory", 4)
    handlers = {n: words[n] & ~1 for n in FAULTS if n < len(words) and words[n] & 1}
    # the optional breakpoints on the driver's invoke and the exits
    functions = {fn.name: fn.address for fn in image.functions if fn.name == INVOKE or fn.name in EXITS}
    return RunImage(path, board, sp, reset & ~1, handlers, functions,
                    _stub_address(path, elf, loads, board), image, wait_sites(image),
                    _names_at(image, set(handlers.values())))


def _names_at(image: Image, addresses: set[int]) -> dict[int, tuple[str, ...]]:
    """Every defined function symbol at each address: a CMSIS startup file's Default_Handler
    and the handlers it stands in for (`__attribute__((weak, alias("Default_Handler")))`) share
    one. The strong (global) definition first, then the weak aliases, then local ones."""
    rank = {S.STB_GLOBAL: 0, S.STB_WEAK: 1}
    found: dict[int, list[tuple[int, str]]] = {}
    for fn in image.functions:
        if fn.address in addresses:
            found.setdefault(fn.address, []).append((rank.get(fn.binding, 2), fn.name))
    return {a: tuple(dict.fromkeys(n for _, n in sorted(v))) for a, v in found.items()}


class NotOnBoard(InputError):
    """A segment at an address the board has no memory for: the image cannot boot there.
    `kind` is "code" (a segment that loads bytes) or "memory" (one that only occupies)."""

    def __init__(self, path, board: QemuBoard, address: int, size: int, verb: str, what: str = "a segment"):
        self.kind = "code" if verb == "loads" else "memory"
        self.address, self.machine = address, board.machine
        super().__init__(path, f"{what} {verb} 0x{address:08x}..0x{address + size:08x}, outside "
                               f"{board.machine}'s memory (for a {board.soc} image: {board.describe()})")


def _in_memory(path, board: QemuBoard, address: int, size: int, verb: str, what: str = "a segment") -> None:
    if size and board.memory_at(address, size) is None:
        raise NotOnBoard(path, board, address, size, verb, what)


def _read(elf, loads, address: int, size: int) -> bytes | None:
    for p in loads:
        if p.p_paddr <= address and address + size <= p.p_paddr + p.p_filesz:
            start = p.p_offset + address - p.p_paddr
            return bytes(elf.data[start:start + size])
    return None


def _stub_address(path, elf, loads, board: QemuBoard) -> int:
    """STUB_BYTES at the top of a RAM the image leaves unused (ITCM first: code memory, secure
    alias; never DDR), for the few instructions that raise the NPU's interrupt from inside the
    guest."""
    used = [(p.p_vaddr, p.p_vaddr + p.p_memsz) for p in loads]
    used += [(p.p_paddr, p.p_paddr + p.p_memsz) for p in loads]
    used += [(s.sh_addr, s.sh_addr + s.sh_size) for s in elf.shdrs if s.sh_flags & S.SHF_ALLOC]
    for memory in board.memories:
        if memory.rom or memory.name == "DDR":
            continue
        lo, hi = memory.spans()[-1]
        stub = hi - STUB_BYTES
        if not any(a < stub + STUB_BYTES and stub < b for a, b in used):
            return stub
    raise InputError(path, f"every RAM of {board.machine} ends in bytes the image uses: no room "
                     "for the interrupt stub")
