"""Zephyr's init entries: how Zephyr calls a device's init function, and the argument it gets.

Zephyr (github.com/zephyrproject-rtos/zephyr, 3.x):
- include/zephyr/init.h: `struct init_entry { union init_function init_fn; const struct device
  *dev; }` (two words on a 32-bit core); Z_INIT_ENTRY_DEFINE places one, const, in a
  `.z_init_<level>` section under the name `__init_<name>` (for a device, `__init___device_dts_ord_N`);
- kernel/init.c: `do_device_init(entry)` calls `entry->init_fn.dev(entry->dev)`: the init
  function gets the entry's device in r0 (AAPCS);
- include/zephyr/device.h: `struct device { const char *name; const void *config; const void
  *api; struct device_state *state; void *data; ... }`, const, so a read-only object of the image,
  as is the driver's config it points at (hal_ethos_u's `ethosu_dts_info_N`, whose first word is
  the devicetree's `reg`, the NPU's base address).
Nothing calls the init function directly: its r0 at entry is the device of its init entry when
every word of the image that holds its address (address|1, a Thumb function) is the first word
of an `__init_*` entry in a read-only section, and no branch of the code targets it. Its calls
are then read again with r0 seeded to that device, loads from read-only words followed
(weaklink.bind.constmem): one reading per entry, each giving its own values. A value loaded from
a writable word stays unknown.
"""
from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass

from weaklink.bind import callsite
from weaklink.bind.constmem import read_only_word
from weaklink.read import elfstructs as S

PREFIX = "__init_"
ENTRY_SIZE = 8                  # struct init_entry: init_fn, dev
ARGUMENT_REGS = range(4)


@dataclass(frozen=True)
class InitEntry:
    name: str                   # `__init_<name>`
    address: int
    device: int                 # entry->dev: what the init function gets in r0
    device_name: str | None     # the symbol at `device`

    @property
    def seed(self) -> str:
        device = f"`{self.device_name}`" if self.device_name else f"{self.device:#x}"
        return f"r0 = {device} from Zephyr's init entry `{self.name}`"


HOLDING = (S.SHT_PROGBITS, S.SHT_INIT_ARRAY, S.SHT_FINI_ARRAY, S.SHT_PREINIT_ARRAY)


def _held_at(image, value: int) -> list[int]:
    """Every word-aligned address of a loaded section (code, data, the C runtime's init and
    fini arrays) whose word is `value`."""
    needle, out = struct.pack("<I", value), []
    for i, sh in enumerate(image.elf.shdrs):
        if sh.sh_type not in HOLDING or not sh.sh_flags & S.SHF_ALLOC:
            continue
        data = image.elf.section_bytes(i)
        at = data.find(needle)
        while at >= 0:
            if (sh.sh_addr + at) % 4 == 0:
                out.append(sh.sh_addr + at)
            at = data.find(needle, at + 1)
    return out


def _entry_at(image, address: int) -> InitEntry | None:
    sym = image.symbol_at(address, (S.STT_OBJECT,))
    if sym is None or not sym.name.startswith(PREFIX) or sym.address != address or sym.size != ENTRY_SIZE:
        return None
    device = read_only_word(image, address + 4)
    if read_only_word(image, address) is None or not device:
        return None
    held = image.symbol_at(device, (S.STT_OBJECT,))
    return InitEntry(sym.name, address, device, held.name if held and held.address == device else None)


def init_entries(image, function: int) -> list[InitEntry]:
    """The init entries that are the only way to call the Thumb function at `function`: empty
    when a branch of the code targets it, or a word that is no init entry holds its address."""
    holders = _held_at(image, function | 1)
    entries = [_entry_at(image, at) for at in holders]
    if not entries or None in entries or callsite.branches_to(image, {function}):
        return []
    return entries


def through_init_entries(image, calls: list, targets: set[int]) -> list:
    """`calls` (weaklink.bind.callsite.CodeCall), where a calling function that leaves an argument
    register unknown is an init function: its calls once per init entry, read with r0 at entry
    the entry's device (the CodeCall's `seed` says so)."""
    functions = {c.function for c in calls
                 if not c.note and any(r not in c.values for r in ARGUMENT_REGS)}
    again = {}
    for function in sorted(functions):
        entries = init_entries(image, function)
        if entries:
            again[function] = [(e, {a.call_site: a for a in callsite.read_again(
                image, function, targets, {0: e.device})}) for e in entries]
    if not again:
        return calls
    out = []
    for c in calls:
        if c.function not in again:
            out.append(c)
            continue
        for entry, read in again[c.function]:
            values = read[c.call_site].values if c.call_site in read else c.values
            out.append(dataclasses.replace(
                c, values=values, seed=entry.seed,
                origins={r: o for r, o in c.origins.items() if r not in values}))
    return out
