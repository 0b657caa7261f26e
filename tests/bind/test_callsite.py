"""The Thumb call-site reader on real code: what `ethosu_init` receives in r2/r3.

Two sources of code, both built with the real arm-none-eabi toolchain:
- assembly snippets, one function per instruction form, each loading r2 = 0x31000000 and
  r3 = 0x60000, running the form, then calling ethosu_init: every store form must leave
  both registers known (a store writes no register, except its base with writeback), every
  load, clobber or unknown instruction must make exactly the registers it may write unknown;
- C compiled by gcc at -Os, -O2 and -O0 for Cortex-M55 and Cortex-M4, calling an
  ethosu_init-shaped function with constant and symbol arguments (at -Os the call is
  TensorFlow Lite Micro's `ldr r2; strd r3, r3, [sp]; mov.w r3, #393216; bl ethosu_init`).
"""
from __future__ import annotations

import re

import pytest

from weaklink import toolchain
from weaklink.bind import callsite
from weaklink.bind.consttrack import step
from weaklink.bind.fastmem import DriverInit, resolve_fast_memory
from weaklink.bind.binding import FastMemoryRule
from weaklink.read import thumb
from weaklink.read.image import Image

FAST, SIZE = 0x31000000, 0x60000
K = "known"                  # the register keeps the value loaded before the snippet

# name: (body, r2, r3) -- r2/r3 are K, None (unknown) or the expected value
CASES = {
    # stores: no register written, except the base with writeback
    "strd_sp": ("strd r3, r3, [sp]", K, K),
    "strd_sp_offset": ("strd r2, r3, [sp, #8]", K, K),
    "strd_pre_writeback_sp": ("strd r2, r3, [sp, #-8]!\n add sp, #8", K, K),
    "strd_post_writeback": ("strd r2, r3, [r4], #8", K, K),
    "strd_writeback_base_r2": ("strd r0, r1, [r2, #8]!", None, K),
    "stmia16_writeback": ("stmia r4!, {r2, r3}", K, K),
    "stmia16_base_r2": ("stmia r2!, {r0, r1}", None, K),
    "stm_w_no_writeback": ("stm.w r4, {r2, r3}", K, K),
    "stmdb_sp": ("stmdb sp!, {r2, r3}\n add sp, #8", K, K),
    "stmdb_base_r3": ("stmdb r3!, {r0, r1}", K, None),
    "push16": ("push {r2, r3}\n add sp, #8", K, K),
    "push_w": ("push.w {r2, r3, r4, r5, r6, r7, r8, lr}\n add sp, #32", K, K),
    "str_sp": ("str r2, [sp, #4]\n str r3, [sp]", K, K),
    "str_w_sp_large": ("str.w r2, [sp, #1024]", K, K),
    "str_imm": ("str r2, [r4, #4]", K, K),
    "str_reg": ("str r2, [r4, r5]", K, K),
    "str_w_reg_shift": ("str.w r3, [r4, r5, lsl #2]", K, K),
    "strb_strh": ("strb r2, [r4, #1]\n strh r3, [r4, #2]", K, K),
    "strb_w_negative": ("strb.w r2, [r4, #-1]", K, K),
    "str_pre_writeback": ("str r2, [r4, #4]!", K, K),
    "str_post_writeback": ("str r3, [r4], #4", K, K),
    "strt": ("strt r2, [r4, #4]", K, K),
    "str_pre_writeback_base_r2": ("str r0, [r2, #4]!", None, K),
    "strh_post_writeback_base_r3": ("strh r0, [r3], #2", K, None),
    "str_sp_pre_writeback": ("str r0, [sp, #-4]!\n add sp, #4", K, K),
    "strex": ("strex r0, r2, [r4]", K, K),
    "strex_status_r3": ("strex r3, r2, [r4]", K, None),
    "vpush": ("vpush {s0-s1}\n vpop {s0-s1}", K, K),
    "vstr_vldr": ("vstr s0, [r2]\n vldr s1, [r3, #4]", K, K),
    # loads and other writes
    "ldrd_sp": ("ldrd r2, r3, [sp]", None, None),
    "ldrd_post_writeback_base_r2": ("ldrd r0, r1, [r2], #8", None, K),
    "ldm_r2": ("ldm r4, {r2}", None, K),
    "ldmia16_other": ("ldmia r4!, {r0, r1}", K, K),
    "pop16_r2": ("push {r2}\n pop {r2}", None, K),
    "pop_w_r3": ("push.w {r3, r4}\n pop.w {r3, r4}", K, None),
    "ldr_imm": ("ldr r2, [r4]", None, K),
    "ldr_writeback_base_r3": ("ldr r0, [r3, #4]!", K, None),
    "ldrb": ("ldrb r3, [r4]", K, None),
    "ldr_sp": ("ldr r2, [sp]", None, K),
    "ldrex": ("ldrex r2, [r4]", None, K),
    "vldmia_writeback_r2": ("vldmia r2!, {s0}", None, K),
    "vmov_core_single": ("vmov r3, s0", K, None),
    "vmov_two_core": ("vmov r2, r3, d0", None, None),
    "vmov_to_fp": ("vmov s0, r2\n vmov d1, r2, r3", K, K),
    "vmrs": ("vmrs r2, fpscr", None, K),
    "mrs": ("mrs r2, primask", None, K),
    "sdiv": ("sdiv r2, r0, r1", None, K),
    "umull": ("umull r2, r3, r0, r1", None, None),
    "mul": ("mul r3, r0, r1", K, None),
    "uxtb": ("uxtb r2, r2", None, K),
    "add_sp": ("add r2, sp, #8", None, K),
    "mve_vaddv": ("vaddv.s32 r2, q0", None, None),          # MVE: may write any register
    "svc": ("svc #0", None, None),
    "blx_register": ("blx r5", None, None),
    "call_keeps_callee_saved": ("ldr r4, =0x31000040\n bl other\n mov r2, r4\n mov.w r3, #0x40000",
                                0x31000040, 0x40000),
    "call_clobbers": ("bl other", None, None),
    # constants
    "movs_lsls": ("movs r3, #3\n lsls r3, r3, #17", K, SIZE),
    "adds_imm8": ("adds r2, #16", FAST + 16, K),
    "add_w_imm": ("add.w r2, r2, #256", FAST + 256, K),
    "movw_movt": ("movw r2, #0x1234\n movt r2, #0x3100", 0x31001234, K),
    "movt_unknown_twice": ("ldr r2, [r4]\n movt r2, #0x3100\n movt r2, #0x3100", None, K),
    "mvn": ("mvn r3, #0", K, 0xFFFFFFFF),
    "ldrd_literal": ("ldrd r2, r3, lits_{name}\n b 1f\n .p2align 2\nlits_{name}: .word 0x31000100, 0x20000\n1:",
                     0x31000100, 0x20000),
    # control flow
    "it_conditional_write": ("cmp r0, #0\n it eq\n moveq r2, #0", None, K),
    "it_same_value": ("cmp r0, #0\n it eq\n moveq r3, #0x60000", K, K),
    "ite_both_unknown": ("cmp r0, #0\n ite eq\n moveq r2, r4\n movne r2, r5", None, K),
    "paths_disagree": ("cbz r0, 1f\n ldr r2, =0x32000000\n1:", None, K),
    "paths_agree": ("cbz r0, 1f\n ldr r2, =0x31000000\n1:", K, K),
    "loop_counter": ("movs r3, #0\n1: adds r3, #1\n cmp r3, #10\n bne 1b", K, None),
    "loop_invariant": ("movs r0, #0\n1: adds r0, #1\n cmp r0, #10\n bne 1b", K, K),
    "branch_over_pool": ("b 1f\n .p2align 2\n .word 0x2200bf00, 0x2300bf00\n1:", K, K),
    "dls_le_invariant": ("dls lr, r0\n1: str r2, [r4], #4\n le lr, 1b", K, K),
    "wls_le_counter": ("wls lr, r0, 2f\n1: adds r2, #1\n le lr, 1b\n2:", None, K),
    "tbb": ("tbb [pc, r0]\n .byte 1, 2\n1: mov r2, r4\n2:", None, None),
}


def _source() -> str:
    out = [".syntax unified", ".thumb", ".text",
           ".global ethosu_init", ".type ethosu_init, %function", "ethosu_init:", " bx lr",
           ".size ethosu_init, .-ethosu_init",
           ".type other, %function", "other:", " bx lr", ".size other, .-other"]
    for name, (body, _, _) in CASES.items():
        out += [f".global case_{name}", f".type case_{name}, %function", ".p2align 2", f"case_{name}:",
                " push {r4, r5, r6, lr}", f" ldr r2, ={FAST:#x}", " movw r3, #0", " movt r3, #6",
                *(" " + line.strip() if not line.strip().endswith(":") else line.strip()
                  for line in body.replace("{name}", name).splitlines()),
                " bl ethosu_init", " pop {r4, r5, r6, pc}", " .ltorg", f".size case_{name}, .-case_{name}"]
    out += [".global tail_call", ".type tail_call, %function", "tail_call:",
            f" ldr r2, ={FAST:#x}", " mov.w r3, #0x60000", " b.w ethosu_init", " .ltorg",
            ".size tail_call, .-tail_call"]
    return "\n".join(out) + "\n"


def _calls(elf) -> dict[str, callsite.CodeCall]:
    image = Image.from_path(elf)
    c = image.defined
    funcs = sorted((int(a), int(a) + int(n), image.text(int(o), int(ln)))
                   for a, n, o, ln, t in zip(c.address, c.size, c.name_off, c.name_len, c.type)
                   if t == 2)
    out = {}
    for call in DriverInit(image).code:
        name = next(n for a, e, n in funcs if a <= call.call_site < e)
        out[name] = call
    return out


@pytest.fixture(scope="module")
def snippets(cross_toolchain, tmp_path_factory):
    d = tmp_path_factory.mktemp("thumb")
    (d / "cases.S").write_text(_source())
    done = toolchain.run("gcc", ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-nostdlib",
                                 "-Wl,-e,ethosu_init", "cases.S", "-o", "cases.elf"], cwd=d)
    assert done.returncode == 0, done.stderr
    return _calls(d / "cases.elf")


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_instruction_form(snippets, name):
    _, r2, r3 = CASES[name]
    call = snippets[f"case_{name}"]
    for reg, want, known in ((2, r2, FAST), (3, r3, SIZE)):
        got = call.values.get(reg)
        expected = known if want == K else want
        assert got == expected, f"r{reg}: {got!r} != {expected!r}"


def test_a_table_jump_says_why(snippets):
    assert "jumps through a register or a table" in snippets["case_tbb"].note


def test_a_tail_call_is_a_call_site(snippets):
    assert snippets["tail_call"].values == {2: FAST, 3: SIZE}


# -- C compiled by gcc ----------------------------------------------------------------------------
DRIVER = r"""
#include <stddef.h>
#include <stdint.h>
struct ethosu_driver { void *dev; const void *fast; size_t size; };
int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable)
{
    drv->dev = base_address;
    drv->fast = fast_memory;
    drv->size = fast_memory_size;
    return (int)(secure_enable + privilege_enable) - 2;
}
extern int npu_init(int which);
int main(void) { return npu_init(0); }
"""

CALLER = r"""
#include <stddef.h>
#include <stdint.h>
struct ethosu_driver { void *dev; const void *fast; size_t size; };
int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
static struct ethosu_driver drv;
#if SYMBOL
static uint8_t fast_memory[393216] __attribute__((aligned(16), section(".bss.ethosu_scratch")));
#define FAST fast_memory
#else
#define FAST ((const void *)0x31000000)
#endif
volatile int table[64];
int npu_init(int which)
{
    (void)which;
    for (int i = 0; i < 64; ++i)        /* a loop first: Armv8.1-M low-overhead loops at -O2 */
        table[i] = i * which;
    if (ethosu_init(&drv, (void *)0x48102000, FAST, 393216, 1, 1))
        return -1;
    return 0;
}
"""

BUILDS = [(cpu, opt, symbol) for cpu in ("cortex-m55", "cortex-m4")
          for opt in ("-Os", "-O2", "-O0") for symbol in (0, 1)]


def _build(d, cpu, opt, symbol, extra=()):
    (d / "driver.c").write_text(DRIVER)
    (d / "caller.c").write_text(CALLER)
    elf = d / f"{cpu}{opt}{symbol}.elf"
    done = toolchain.run("gcc", [f"-mcpu={cpu}", "-mthumb", opt, f"-DSYMBOL={symbol}", *extra,
                                 "-ffunction-sections", "-nostdlib", "-Wl,-e,main",
                                 "caller.c", "driver.c", "-o", elf.name], cwd=d)
    assert done.returncode == 0, done.stderr
    return elf


@pytest.mark.parametrize("cpu, opt, symbol", BUILDS)
def test_compiled_call_sites(cross_toolchain, tmp_path, cpu, opt, symbol):
    elf = _build(tmp_path, cpu, opt, symbol)
    image = Image.from_path(elf)
    [call] = DriverInit(image).code
    fast = image.lookup("fast_memory")[0].address if symbol else 0x31000000
    assert call.values.get(2) == fast and call.values.get(3) == 393216
    assert call.values.get(1) == 0x48102000
    found = resolve_fast_memory(image, FastMemoryRule())
    assert (found.address, found.size) == (fast, 393216)
    assert found.source.startswith("literal pool")
    assert (found.symbol == "fast_memory") == bool(symbol)


def test_Os_is_the_tflm_call_shape(cross_toolchain, tmp_path):
    """-Os for Cortex-M55 gives TFLM's call: the r2 literal, then STRD of r3 (args 5 and 6)
    before r3 gets the size; the disassembly proves the shape the test is about."""
    elf = _build(tmp_path, "cortex-m55", "-Os", 1)
    done = toolchain.run("objdump", ["-d", "--no-show-raw-insn", elf])
    body = done.stdout.split("<npu_init>:")[1].split("\n\n")[0]
    lines = [re.sub(r"\s+", " ", ln.split(":", 1)[1]).strip() for ln in body.splitlines() if ":" in ln]
    call = next(i for i, ln in enumerate(lines) if ln.startswith("bl") and "ethosu_init" in ln)
    window = lines[call - 5:call]
    assert any(ln.startswith("ldr r2, [pc") for ln in window)
    strd = next(i for i, ln in enumerate(window) if ln.startswith("strd r3, r3, [sp]"))
    assert any(ln.startswith("mov.w r3, #393216") for ln in window[strd:])


def test_two_values_on_two_paths_are_unknown(cross_toolchain, tmp_path):
    (tmp_path / "driver.c").write_text(DRIVER)
    (tmp_path / "caller.c").write_text(CALLER.replace(
        "(void *)0x48102000, FAST,", "(void *)0x48102000, which ? (const void *)0x31000000 : FAST,"))
    done = toolchain.run("gcc", ["-mcpu=cortex-m55", "-mthumb", "-O2", "-DSYMBOL=1", "-nostdlib",
                                 "-Wl,-e,main", "caller.c", "driver.c", "-o", "x.elf"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    image = Image.from_path(tmp_path / "x.elf")
    [call] = DriverInit(image).code
    assert 2 not in call.values and call.values.get(3) == 393216
    found = resolve_fast_memory(image, FastMemoryRule())
    assert found.unknown and "not the same on every path" in found.note


def test_thumb_decoder_units():
    """Hand-assembled encodings whose decoding is not obvious from the assembler's output."""
    regs = {2: 5}
    assert step(regs, thumb.decode(0xE9CD, 0x3300, 0x100), lambda a: None).flow == thumb.NEXT
    assert regs == {2: 5}                                    # strd r3, r3, [sp]
    insn = step(regs, thumb.decode(0xF00F, 0xC805, 0x14), lambda a: None)
    assert (insn.flow, insn.target) == (thumb.BRANCH, 0xE)   # le lr, 0xe
    assert step({}, thumb.decode(0xBF08, 0, 0), None).it == 1       # it eq
    assert step({}, thumb.decode(0xBF0C, 0, 0), None).it == 2       # ite eq
    assert step({}, thumb.decode(0xBF01, 0, 0), None).it == 4       # itttt eq
    regs = {2: 1, 3: 2, 4: 3}
    step(regs, thumb.decode(0xE89F, 0x000C, 0), None)               # clrm {r2, r3}
    assert regs == {4: 3}


def test_a_call_through_lds_long_branch_stub(cross_toolchain, tmp_path):
    """ethosu_init 1.5 GB away from its caller: ld inserts `__ethosu_init_veneer` (ldr.w pc,
    [pc] and the address) and the BL goes there. It is a call of ethosu_init, and the stub's
    literal is no function pointer."""
    (tmp_path / "driver.c").write_text(DRIVER)
    (tmp_path / "caller.c").write_text(CALLER)
    (tmp_path / "far.ld").write_text(
        "SECTIONS { .text 0x10000000 : { *(.text.main) *(.text.npu_init) }\n"
        " .far 0x70000000 : { *(.text.ethosu_init) *(.text*) } .bss : { *(.bss*) *(COMMON) } }\n")
    done = toolchain.run("gcc", ["-mcpu=cortex-m55", "-mthumb", "-Os", "-DSYMBOL=1",
                                 "-ffunction-sections", "-nostdlib", "-Wl,-e,main", "-Wl,-T,far.ld",
                                 "caller.c", "driver.c", "-o", "far.elf"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    image = Image.from_path(tmp_path / "far.elf")
    assert image.lookup("__ethosu_init_veneer")
    [call] = DriverInit(image).code
    fast = image.lookup("fast_memory")[0].address
    assert (call.values.get(2), call.values.get(3)) == (fast, 393216)
    assert callsite.address_taken(image, "ethosu_init") is None
    found = resolve_fast_memory(image, FastMemoryRule())
    assert (found.address, found.size) == (fast, 393216)


POINTER_CALLER = r"""
#include <stddef.h>
#include <stdint.h>
struct ethosu_driver { void *dev; const void *fast; size_t size; };
int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable);
typedef int (*init_fn)(struct ethosu_driver *, void *const, const void *, const size_t, uint32_t, uint32_t);
static struct ethosu_driver drv;
static uint8_t fast_memory[4096] __attribute__((aligned(16)));
init_fn volatile npu_init_hook = ethosu_init;
int npu_init(int which)
{
#if CALL
    return npu_init_hook(&drv, (void *)0x48102000, fast_memory, sizeof(fast_memory), 1, which);
#else
    return which;
#endif
}
"""


@pytest.mark.parametrize("call", [0, 1])
def test_only_a_function_pointer_reaches_it(cross_toolchain, tmp_path, call):
    """No BL to ethosu_init, its address in a data word: called through a pointer, arguments
    unknown. (Without the pointer, as in the ExecuTorch fixtures, nothing calls it: none.)"""
    (tmp_path / "driver.c").write_text(DRIVER)
    (tmp_path / "caller.c").write_text(POINTER_CALLER)
    done = toolchain.run("gcc", ["-mcpu=cortex-m55", "-mthumb", "-O2", f"-DCALL={call}",
                                 "-nostdlib", "-Wl,-e,main", "caller.c", "driver.c", "-o", "p.elf"],
                         cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    image = Image.from_path(tmp_path / "p.elf")
    assert DriverInit(image).code == []
    hook = image.lookup("npu_init_hook")[0].address
    assert callsite.address_taken(image, "ethosu_init") == hook
    found = resolve_fast_memory(image, FastMemoryRule())
    assert found.unknown and f"held at {hook:#x}" in found.note
