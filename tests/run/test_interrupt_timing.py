"""When the NPU's completion interrupt arrives (weaklink.run.irq): on the hardware a job takes
far longer than the CPU's way from the store to CMD to its wait, so a driver may reset its done
flag after starting the job, and a driver polling STATUS sees the job running first.

The firmware here is our own driver on a small command stream (a 4 KB DMA copy inside SRAM,
which the NPU reaches on Corstone-300): it starts the job, and only then clears its flag and
waits (WFE, WFI, or a bare spin), or polls STATUS. With the interrupt raised at the store to
CMD, the first three would wait forever and the poller would see the job done at its first read,
so each of these runs fails unless the interrupt comes the way the hardware's does."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from npu.socfile import qemu_board
from weaklink import toolchain
from weaklink.cachedir import REPO
from weaklink.read.image import Image
from weaklink.run import run
from weaklink.run.image import load
from weaklink.run.irq import RUNNING_READS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from firmware_src import build_firmware  # noqa: E402

U55 = dict(accelerator="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")

# The driver: the stream is copied to 0x31000000 (SRAM), region 1 at 0x31001000. The stream
# (Ethos-U55 commands; cmd0 = opcode | param << 16, cmd1 = opcode | 1 << 14 | param << 16 and a
# data word): DMA0 source and destination in region 1 (external), source offset 0, destination
# 0x1000, 4096 bytes; DMA_START; DMA_WAIT; STOP.
DRIVER = r"""
#include <stdint.h>
void say(const char *s);
#define NPU ((volatile uint32_t *)0x48102000u)
enum { STATUS = 0x4 / 4, CMD = 0x8 / 4, QBASE = 0x10 / 4, QBASE_HI = 0x14 / 4, QSIZE = 0x20 / 4,
       BASEP1 = 0x88 / 4 };
#define RUNNING 1u
#define IRQ_RAISED (1u << 1)
#define CMD_END_REACHED (1u << 5)
#define CLEAR_IRQ 2u
#define START 1u
#define NVIC_ISER1 (*(volatile uint32_t *)0xE000E104u)
static const uint32_t stream[] = {
    0x00010130u, 0x00010131u, 0x00004030u, 0x0u, 0x00004031u, 0x1000u, 0x00004032u, 0x1000u,
    0x00000010u, 0x00000011u, 0xFFFF0000u };
static volatile uint32_t *const sram = (uint32_t *)0x31000000u;
#define SRC (0x1000u / 4)
#define DST (0x2000u / 4)
volatile int done;
volatile uint32_t seen;

void NPU_IRQHandler(void) { NPU[CMD] = CLEAR_IRQ; seen = NPU[STATUS]; done = 1; }

static void say_number(const char *what, uint32_t n) {
    char text[12];
    int i = 11;
    text[i] = 0;
    do { text[--i] = (char)('0' + n % 10); n /= 10; } while (n);
    say(what);
    say(&text[i]);
    say("\n");
}

static void start(void) {
    for (unsigned i = 0; i < sizeof stream / 4; ++i) sram[i] = stream[i];
    for (unsigned i = 0; i < 1024; ++i) { sram[SRC + i] = i * 2654435761u; sram[DST + i] = 0; }
    NPU[QBASE] = 0x31000000u;
    NPU[QBASE_HI] = 0;
    NPU[QSIZE] = sizeof stream;
    NPU[BASEP1] = 0x31001000u;
    NPU[BASEP1 + 1] = 0;
    NPU[CMD] = START;
}

static int copied(void) {
    for (unsigned i = 0; i < 1024; ++i)
        if (sram[DST + i] != i * 2654435761u) return 0;
    return 1;
}
"""

WAITER = DRIVER + r"""
int main(void) {
    NVIC_ISER1 = 1u << (56 - 32);
    start();
    done = 0;            /* after the start: the interrupt must not have come yet */
    while (!done) { WAIT; }
    if (!(seen & CMD_END_REACHED)) return 2;
    if (!copied()) return 3;
    say("copied\n");
    return 0;
}
"""

POLLER = DRIVER + r"""
int main(void) {
    start();             /* the NPU's interrupt is left disabled: the driver polls */
    uint32_t status, running = 0;
    while ((status = NPU[STATUS]) & RUNNING) ++running;
    say_number("running reads ", running);
    if (running == 0) return 4;                  /* no job is over at the first read */
    if (!(status & CMD_END_REACHED) || !(status & IRQ_RAISED)) return 5;
    NPU[CMD] = CLEAR_IRQ;
    if (!copied()) return 3;
    say("copied\n");
    return 0;
}
"""

WAITS = {"wfe": '__asm volatile("wfe")', "wfi": '__asm volatile("wfi")', "timeout": ""}


@pytest.mark.parametrize("wait", WAITS)
def test_a_flag_cleared_after_the_start_sees_the_interrupt(qemu, cross_toolchain, tmp_path, wait):
    elf = build_firmware(tmp_path, f"#define WAIT {WAITS[wait]}\n" + WAITER)
    report = run(elf, **U55, timeout=10)
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    assert report.uart == "copied\n"
    (job,) = report.invocations
    assert job.status == "ok" and job.interrupt and job.written == [(0x31002000, 4096)]
    assert job.interrupt_at == wait
    document = report.to_json()
    data = document["invocations"][0]
    assert data["interrupt_at"] == wait and data["interrupt"] is True
    assert documented_run_fields() == (set(document), set(data))
    where = report.image.where(job.interrupt_pc)
    assert "(main+0x" in where, where
    if wait != "timeout":          # the interrupt came at the wait instruction itself
        assert job.interrupt_pc in report.image.waits and report.image.waits[job.interrupt_pc][0] == wait


def test_a_driver_polling_status_sees_the_job_running_then_done(qemu, cross_toolchain, tmp_path):
    report = run(build_firmware(tmp_path, POLLER), **U55, timeout=10)
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    assert re.search(r"running reads (\d+)", report.uart).group(1) == str(RUNNING_READS)
    assert report.uart.endswith("copied\n")
    (job,) = report.invocations
    assert job.interrupt_at == "status poll" and job.written == [(0x31002000, 4096)]


def test_a_driver_polling_qread_sees_it_advance_only_at_the_end(qemu, cross_toolchain, tmp_path):
    """QREAD (the stream bytes the NPU has consumed) reads 0 while the job runs, QSIZE after."""
    poller = POLLER.replace("while ((status = NPU[STATUS]) & RUNNING) ++running;",
                            "while (NPU[0x18 / 4] != sizeof stream) ++running;\n    status = NPU[STATUS];")
    assert poller != POLLER
    report = run(build_firmware(tmp_path, poller), **U55, timeout=10)
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    assert re.search(r"running reads (\d+)", report.uart).group(1) == str(RUNNING_READS)
    assert report.invocations[0].interrupt_at == "register read"


def test_the_wait_instructions_are_those_objdump_decodes(cross_toolchain, tmp_path):
    """Every WFE and WFI the disassembler finds (16-bit and .W) is a wait site, and nothing
    else: the literal pool in between holds the same bytes at an instruction's second half."""
    asm = """
    .syntax unified
    .thumb
    .global waits
    .type waits, %function
waits:
    wfe
    wfi
    wfe.w
    wfi.w
    movw r0, #0xbf20
    ldr r1, =0xbf30bf20
    cbz r0, 1f
    wfe
1:  bx lr
    .ltorg
"""
    elf = build_firmware(tmp_path, "void waits(void); int main(void) { waits(); return 0; }", asm)
    out = subprocess.run([toolchain.tool("objdump"), "-d", str(elf)], capture_output=True, text=True).stdout
    expected = {int(m.group(1), 16): m.group(2) for m in
                re.finditer(r"^\s*([0-9a-f]+):\s+[0-9a-f ]+\s+(wfe|wfi)(?:\.w)?\s*$", out, re.M)}
    found = {address: kind for address, (kind, _) in load(Image.from_path(elf), qemu_board("corstone-300", "corstone-300")).waits.items()}
    assert len(expected) == 5 and found == expected


def documented_run_fields() -> tuple[set[str], set[str]]:
    """docs/json-contract.md's `weaklink run --json`: the top-level table, and Invocation."""
    text = (REPO / "docs" / "json-contract.md").read_text()
    section = text.split("\n## `weaklink run --json`\n", 1)[1].split("\n## ", 1)[0]
    top = {name for line in section.splitlines() if line.startswith("| `")
           for name in re.findall(r"`([a-z_0-9]+)`", line.split(" | ")[0])}
    invocation = re.search(r"Invocation: `\{(.*?)\}`", section, re.S).group(1)
    return top, {name.strip() for name in invocation.split(",")}


CONDITIONAL = DRIVER + r"""
int main(void) {
    NVIC_ISER1 = 1u << (56 - 32);
    start();
    done = 0;
    /* r0 = 0: `it COND; wfeCOND` waits only when COND holds on cmp r0, #0 */
    __asm volatile("movs r0, #0\n cmp r0, #0\n it " COND "\n .global conditional_wfe\n"
                   "conditional_wfe: wfe" COND "\n" ::: "r0", "cc");
    while (!done) { __asm volatile("wfe"); }
    say("copied\n");
    return copied() ? 0 : 3;
}
"""


@pytest.mark.parametrize("cond, waits_there", [("eq", True), ("ne", False)])
def test_a_wfe_in_an_it_block_waits_only_when_its_condition_holds(qemu, cross_toolchain, tmp_path, cond,
                                                                   waits_there):
    elf = build_firmware(tmp_path, f'#define COND "{cond}"\n' + CONDITIONAL)
    out = subprocess.run([toolchain.tool("nm"), str(elf)], capture_output=True, text=True).stdout
    conditional = int(re.search(r"^([0-9a-f]+) T conditional_wfe$", out, re.M).group(1), 16) & ~1
    report = run(elf, **U55, timeout=10)
    assert report.outcome == "exit" and report.exit_code == 0, report.to_table()
    (job,) = report.invocations
    assert conditional in report.image.waits and job.interrupt_at == "wfe"
    assert (job.interrupt_pc == conditional) == waits_there


def test_the_job_time_is_qemu_cpu_time_with_wall_time_for_a_cpu_that_does_not_run():
    """The budget runs on QEMU's CPU seconds; a halted CPU (or no schedstat) gets HALTED wall
    seconds more, and a job longer than SPIN_BUDGET at its clock keeps its own duration."""
    import time

    from weaklink.run.irq import HALTED, SPIN_BUDGET, Pending, budget

    assert budget(1_000, 500e6) == SPIN_BUDGET and budget(100e6, 500e6) == pytest.approx(0.2)
    now = time.monotonic()
    p = Pending(job=None, cpu=10.0, wall=now, budget=SPIN_BUDGET)
    assert p.left(10.0 + SPIN_BUDGET) <= 0 < p.left(10.0)                 # CPU time spent: over
    assert SPIN_BUDGET + HALTED - 0.5 < Pending(None, None, now, SPIN_BUDGET).left(None) <= SPIN_BUDGET + HALTED
    assert Pending(None, 10.0, now - SPIN_BUDGET - HALTED, SPIN_BUDGET).left(10.0) <= 0   # halted: wall
