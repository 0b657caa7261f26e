"""The load/store performer (weaklink.run.loadstore) against the CPU: every form a driver may use
on a device register is executed by QEMU's Cortex-M55 on RAM, one instruction at a time, and
the decoder's address, loaded values, stored bytes, base writeback, length and IT-state
advance must equal what the CPU did."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from weaklink.run import loadstore, rsp
from weaklink.run.qemu import Qemu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import build_firmware  # noqa: E402

BUFFER = 0x30002000            # DTCM, in the middle of 8 KB the sequence works on
FORMS = """
    ldr r2, [r0]
    ldr r3, [r0, #124]
    str r2, [r0, #8]
    ldrb r4, [r0, #3]
    strb r4, [r0, #31]
    ldrh r5, [r0, #6]
    strh r5, [r0, #62]
    ldr r6, [r0, r1]
    str r6, [r0, r1]
    strh r6, [r0, r1]
    strb r6, [r0, r1]
    ldrsb r7, [r0, r1]
    ldrsh r7, [r0, r1]
    ldrb r7, [r0, r1]
    ldrh r7, [r0, r1]
    ldr.w r8, [r0, #1020]
    str.w r8, [r0, #2040]
    ldrb.w r8, [r0, #2041]
    strh.w r8, [r0, #2042]
    ldr r9, [r0, #-4]
    ldr r9, [r0, #4]!
    ldr r10, [r0], #4
    str r10, [r0, #-8]!
    strb r10, [r0], #1
    ldrsb.w r11, [r0, #5]
    ldrsh.w r11, [r0, #-3]
    ldrsb.w r11, [r0, #301]
    ldrsh.w r11, [r0, #302]
    ldr.w r12, [r0, r1, lsl #2]
    str.w r12, [r0, r1, lsl #1]
    ldrb.w r12, [r0, r1, lsl #3]
    ldrt r4, [r0, #4]
    strt r4, [r0, #12]
    bic r0, r0, #3
    ldrd r2, r3, [r0, #8]
    strd r2, r3, [r0, #-16]!
    ldrd r4, r5, [r0], #8
    strd r4, r5, [r0, #40]
    ldm r0!, {r2, r3}
    stm r0!, {r2, r3}
    ldm r0, {r0, r2}
    mov r0, r13
    ldr r0, =0x30002000
    ldmia.w r0, {r4-r6}
    stmdb r0!, {r4-r6}
    ldmdb r0, {r2, r3}
    ldmia.w r0!, {r2, r3, r7}
    stmia.w r0, {r2, r3, r7}
    cmp r0, r0
    itte eq
    ldreq r2, [r0, #4]
    streq r2, [r0, #20]
    ldrne r3, [r0]
"""
ASM = f"""
    .syntax unified
    .thumb
    .global sequence, sequence_end
    .type sequence, %function
sequence:
    ldr r0, ={BUFFER:#x}
    movs r1, #8
{FORMS}
sequence_end:
    b sequence_end
    .ltorg
"""
MAIN = r"""
#include <stdint.h>
void sequence(void);
int main(void) {
    volatile uint8_t *p = (uint8_t *)0x30001000u;
    for (int i = 0; i < 0x2000; ++i) p[i] = (uint8_t)(i * 151u + 7u);   /* signs of all kinds */
    sequence();
    return 0;
}
"""


def _nm(elf):
    import subprocess
    from weaklink import toolchain
    out = subprocess.run([toolchain.tool("nm"), str(elf)], capture_output=True, text=True).stdout
    return {p[2]: int(p[0], 16) for p in (line.split() for line in out.splitlines()) if len(p) == 3}


def test_every_form_performs_as_the_cpu_does(qemu, cross_toolchain, tmp_path):
    elf = build_firmware(tmp_path, MAIN, ASM)
    syms = _nm(elf)
    q = Qemu.start("mps3-an547", str(elf))
    try:
        c = rsp.GdbClient.connect(str(q.gdb))
        start, end = syms["sequence"] & ~1, syms["sequence_end"] & ~1
        c.insert(rsp.HW_BREAKPOINT, start)
        c.resume()
        assert c.wait(10).signal == rsp.SIGTRAP
        c.remove(rsp.HW_BREAKPOINT, start)
        checked = 0
        while True:
            regs = c.core_registers()
            pc = regs[15]
            if pc == end:
                break
            code = c.read_memory(pc, 4)
            try:
                access = loadstore.access_at(code, pc)
            except Exception:
                access = None                       # not a load/store: let the CPU run it
            if access is None or not _condition_passes(regs[16]):
                c.step()
                continue
            base = access.address(regs)
            memory_before = c.read_memory(base, 4 * len(access.registers) + 4)
            c.step()
            after = c.core_registers()
            where = f"{code[:access.length].hex()} at 0x{pc:08x}"
            assert after[15] == pc + access.length, where
            assert after[16] == loadstore.it_advance(regs[16]), where
            for k, rt in enumerate(access.registers):
                raw = memory_before[k * access.size:(k + 1) * access.size]
                value = int.from_bytes(raw, "little")
                if access.load:
                    if access.signed and value >> (8 * access.size - 1):
                        value -= 1 << 8 * access.size
                    assert after[rt] == value & 0xFFFFFFFF, where
                else:
                    stored = c.read_memory(base + k * access.size, access.size)
                    assert int.from_bytes(stored, "little") == regs[rt] & ((1 << 8 * access.size) - 1), where
            new = access.new_base(regs)
            if new is not None and not (access.load and access.base in access.registers):
                assert after[access.base] == new, where
            elif not (access.load and access.base in access.registers):
                assert after[access.base] == regs[access.base], where
            checked += 1
        assert checked == FORMS.count("[") + FORMS.count("{") - 1   # every load/store but ldrne
    finally:
        q.close()


def _condition_passes(xpsr: int) -> bool:
    """Only what this sequence needs: outside an IT block, or in one on EQ/NE after cmp r0, r0."""
    it = ((xpsr >> 10) & 0x3F) << 2 | (xpsr >> 25) & 3
    if it & 0xF == 0:
        return True
    cond = it >> 4
    z = xpsr >> 30 & 1
    return {0: z == 1, 1: z == 0}[cond]


@pytest.mark.parametrize("code", ["e8500f00", "ed900a00", "4b01"])
def test_other_instructions_are_refused_with_the_pc(code):
    # ldrex r0, [r0]; vldr s0, [r0]; ldr r3, [pc, #4] (a literal: never a device access)
    data = bytes.fromhex(code)
    data = data[1::-1] + data[3:1:-1] if len(data) == 4 else data[::-1]
    with pytest.raises(Exception, match="pc 0x10000100"):
        loadstore.access_at(data.ljust(4, b"\0"), 0x10000100)
