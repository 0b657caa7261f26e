"""Execute a command stream on bytes: replay the registers, run each kernel and DMA.

The NPU keeps every register it was last given and an ``NPU_OP_*`` starts an operation
with the current state. Operations run in stream order: Vela's KERNEL_WAIT/DMA_WAIT make
the stream's result equal to in-order execution, so waits need no modelling here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npu.emulate.ops import dims, field, stride_dilation
from npu.errors import InputError
from npu.functional.fmap import FeatureMap, signed16
from npu.functional.kernels.conv import conv2d, depthwise2d
from npu.functional.kernels.elementwise import MODES, UNARY, ShiftError, combine, scale_operands
from npu.functional.kernels.pool import average, max_pool, sum_pool
from npu.functional.lut import LutError, lookup
from npu.functional.memory import AddressSpace
from npu.functional.scale import decode_scales, rescale, round_shift, to_ofm
from npu.functional.weights import IFM_UBLOCK_DEPTH, Traversal, decode_weights

KERNELS = {"NPU_OP_CONV": "CONV", "NPU_OP_DEPTHWISE": "DEPTHWISE", "NPU_OP_POOL": "POOL",
           "NPU_OP_ELEMENTWISE": "ELEMENTWISE"}
UNSUPPORTED = {"NPU_OP_RESIZE": "resize"}


@dataclass(frozen=True)
class Geometry:
    ofm_shape: tuple[int, int, int]
    kernel: tuple[int, int]           # undilated h, w
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int, int, int]    # top, left, bottom, right

    @classmethod
    def from_regs(cls, regs) -> "Geometry":
        return cls(dims(regs, "OFM"),
                   (field(regs, "NPU_SET_KERNEL_HEIGHT_M1", "height_m1") + 1,
                    field(regs, "NPU_SET_KERNEL_WIDTH_M1", "width_m1") + 1),
                   *stride_dilation(regs),
                   tuple(field(regs, f"NPU_SET_IFM_PAD_{s}", "pad") for s in ("TOP", "LEFT", "BOTTOM", "RIGHT")))

    def ifm_hw(self) -> tuple[int, int]:
        """The IFM rows and columns the kernel reads (the rest of the window is padding)."""
        (oh, ow, _), (kh, kw), (sy, sx), (dy, dx) = self.ofm_shape, self.kernel, self.stride, self.dilation
        top, left, bottom, right = self.pad
        return (max((oh - 1) * sy + (kh - 1) * dy + 1 - top - bottom, 1),
                max((ow - 1) * sx + (kw - 1) * dx + 1 - left - right, 1))


class Engine:
    def __init__(self, commands, mem: AddressSpace, ofm_ublock_depth: int, path=None, shram_kb: int = 0):
        self.commands = commands
        self.mem = mem
        self.ofm_ublock = ofm_ublock_depth
        self.path = path
        self.shram = np.zeros(shram_kb * 1024, dtype=np.uint8)  # what DMAs put in SHRAM (the LUTs)
        self.kernels = 0

    def run(self):
        regs: dict[str, dict] = {}
        for cmd in self.commands:
            name = cmd.command
            if name.startswith("NPU_SET_"):
                regs[name] = cmd.fields
            elif name in KERNELS:
                self.mem.seq += 1
                self._kernel(KERNELS[name], regs, cmd)
                self.kernels += 1
            elif name in UNSUPPORTED:
                raise InputError(self.path, f"{name}: the functional engine has no {UNSUPPORTED[name]} kernel",
                                 cmd.offset)
            elif name == "NPU_OP_DMA_START":
                self.mem.seq += 1
                self._dma(regs, cmd)
            elif name == "NPU_OP_STOP":
                break

    # -- DMA -----------------------------------------------------------------------------
    def _dma(self, regs, cmd):
        length = field(regs, "NPU_SET_DMA0_LEN", "addr") or field(regs, "NPU_SET_DMA0_LEN", "length")
        src_r = regs.get("NPU_SET_DMA0_SRC_REGION", {})
        dst_r = regs.get("NPU_SET_DMA0_DST_REGION", {})
        src, dst = field(regs, "NPU_SET_DMA0_SRC", "addr"), field(regs, "NPU_SET_DMA0_DST", "addr")
        what = f"DMA at stream offset 0x{cmd.offset:06x}"
        data = self.mem.read(src_r.get("region", 0), src, length, what + " (source)")
        self.mem.record("DMA", cmd.offset, src_r.get("region", 0), src, src + length, "DMA source", write=False)
        if dst_r.get("region_mode", "DMA_REGION_MODE_EXTERNAL").endswith("EXTERNAL"):
            self.mem.load(dst_r.get("region", 0), dst, data, what + " (destination)")
            self.mem.record("DMA", cmd.offset, dst_r.get("region", 0), dst, dst + length, "DMA destination")
        else:                                                   # into SHRAM: the LUT
            if dst + length > len(self.shram):
                raise InputError(self.path, f"{what}: SHRAM bytes {dst}..{dst + length} are outside its "
                                            f"{len(self.shram)} bytes", cmd.offset)
            self.shram[dst:dst + length] = np.frombuffer(data, dtype=np.uint8)

    # -- kernels -------------------------------------------------------------------------
    def _stream(self, regs, name: str, what: str, op: str, cmd) -> bytes:
        region = field(regs, f"NPU_SET_{name}_REGION", "region")
        base = field(regs, f"NPU_SET_{name}_BASE", "addr")
        length = field(regs, f"NPU_SET_{name}_LENGTH", "length")
        self.mem.record(op, cmd.offset, region, base, base + length, name.lower(), write=False)
        return self.mem.read(region, base, length, what)

    def _kernel(self, op: str, regs, cmd):
        what = f"{op} at stream offset 0x{cmd.offset:06x}"
        geo = Geometry.from_regs(regs)
        ofm = FeatureMap.from_regs(regs, "OFM")
        oh, ow, oc = geo.ofm_shape
        act_regs = regs.get("NPU_SET_ACTIVATION", {})
        act = act_regs.get("activation_function", "ACTIVATION_FUNCTION_RELU")
        if not act.endswith(("RELU", "NONE")) and "TABLE_" not in act:
            raise InputError(self.path, f"{what}: activation {act} is not modelled", cmd.offset)
        try:
            if op == "ELEMENTWISE":
                values = self._elementwise(regs, cmd, geo, what)
            else:
                ifm = FeatureMap.from_regs(regs, "IFM")
                ic = field(regs, "NPU_SET_IFM_DEPTH_M1", "depth_m1") + 1
                ih, iw = geo.ifm_hw()
                x = ifm.read(self.mem, ih, iw, ic, what + " IFM", op, cmd.offset) - ifm.zero_point
                if op == "POOL":
                    values = self._pool(regs, cmd, geo, x, ifm.bits, ofm)
                else:
                    values = self._conv(op, regs, cmd, geo, x, ic, ifm.bits, ofm, what)
            lo, hi = (signed16(field(regs, f"NPU_SET_ACTIVATION_{b}", "clip_boundary", d)) for b, d in
                      (("MIN", 0x8000), ("MAX", 0x7FFF)))
            out = to_ofm(values, ofm.zero_point, lo, hi, ofm.bits, ofm.signed,
                         act_regs.get("activation_clip_range", ""))
            if "TABLE_" in act:
                out = lookup(self.shram, int(act.rsplit("_", 1)[1]), out, ofm.bits, ofm.signed)
        except (LutError, ShiftError) as e:
            raise InputError(self.path, f"{what}: {e}", cmd.offset) from None
        ofm.write(self.mem, out.reshape(oh, ow, oc), what + " OFM", op, cmd.offset)

    def _ofm_scale(self, regs):
        return (field(regs, "NPU_SET_OFM_SCALE", "scale", 1), field(regs, "NPU_SET_OFM_SCALE", "shift"))

    def _output_scale(self, values, regs, ifm_bits: int, ofm):
        """OFM_SCALE on a global-scale result: its shift alone after a 32-bit IFM (scale.py)."""
        scale, shift = self._ofm_scale(regs)
        if ifm_bits == 32:
            return round_shift(values, shift, ofm.round_mode)
        return rescale(values, scale, shift, ofm.round_mode)

    def _conv(self, op, regs, cmd, geo, x, ic, ifm_bits, ofm, what):
        oh, ow, oc = geo.ofm_shape
        order = regs.get("NPU_SET_KERNEL_STRIDE", {}).get("weight_order", "")
        kind = "depthwise" if op == "DEPTHWISE" else ("part_kernel" if order.endswith("PART_KERNEL_FIRST")
                                                        else "depth_first")
        block = field(regs, "NPU_SET_OFM_BLK_DEPTH_M1", "depth_m1") + 1
        t = Traversal(kind, *geo.kernel, 1 if kind == "depthwise" else ic, oc, block, IFM_UBLOCK_DEPTH,
                      self.ofm_ublock, geo.dilation, ifm_bits)
        w = decode_weights(self._stream(regs, "WEIGHT", what + " weights", op, cmd), t, what + " weight stream")
        if kind == "depthwise":
            acc = depthwise2d(x, w, geo.stride, geo.dilation, geo.pad, (oh, ow), ifm_bits)
        else:
            acc = conv2d(x, w, geo.stride, geo.dilation, geo.pad, (oh, ow), ifm_bits)
        if ofm.scale_mode.endswith("GLOBAL"):
            scale, shift = self._ofm_scale(regs)
            return rescale(acc, scale, shift, ofm.round_mode)
        bias, scale, shift = decode_scales(self._stream(regs, "SCALE", what + " scales", op, cmd), oc)
        acc += bias
        return rescale(acc, scale, shift, ofm.round_mode, inplace=True)

    def _pool(self, regs, cmd, geo, x, ifm_bits, ofm):
        oh, ow, oc = geo.ofm_shape
        mode = cmd.fields.get("pooling_mode", "")
        if mode.endswith("REDUCE_SUM"):
            # the sum over the IFM's channels at each position (a 1x1 kernel, one OFM channel),
            # scaled by OFM_SCALE's multiplier and shift on a 32-bit IFM too (scale.py)
            scale, shift = self._ofm_scale(regs)
            return rescale(x.sum(axis=2, keepdims=True), scale, shift, ofm.round_mode)
        x = x[:, :, :oc]
        scale, shift = self._ofm_scale(regs)
        if mode.endswith("MAX"):
            return rescale(max_pool(x, geo.kernel, geo.stride, geo.pad, (oh, ow)), scale, shift, ofm.round_mode)
        total, count = sum_pool(x, geo.kernel, geo.stride, geo.pad, (oh, ow))
        if any(geo.pad) and not mode.endswith("SUM"):
            # An average with padding: the NPU divides by the kernel elements inside the IFM
            # itself (rounding half away from zero), then applies the OFM scale.
            total = average(total, count)
        return rescale(total, scale, shift, ofm.round_mode)

    def _elementwise(self, regs, cmd, geo, what):
        oh, ow, oc = geo.ofm_shape
        mode = cmd.fields.get("elementwise_mode", "")
        if not mode.endswith(MODES):
            raise InputError(self.path, f"{what}: elementwise mode {mode or '?'} is not modelled", cmd.offset)
        ifm = FeatureMap.from_regs(regs, "IFM")
        a = ifm.read(self.mem, oh, ow, oc, what + " IFM", "ELEMENTWISE", cmd.offset) - ifm.zero_point
        ofm = FeatureMap.from_regs(regs, "OFM")
        if mode.endswith(UNARY):
            return self._output_scale(combine(mode, a, a), regs, ifm.bits, ofm)
        bc = regs.get("NPU_SET_IFM2_BROADCAST", {})
        ifm2 = FeatureMap.from_regs(regs, "IFM2")
        if bc.get("broadcast_constant", "").endswith("ENABLE"):
            b = np.full((1, 1, 1), signed16(field(regs, "NPU_SET_IFM2_SCALAR", "scalar")) - ifm2.zero_point,
                        dtype=np.int64)
        else:
            shape = (1 if bc.get("broadcast_h", "").endswith("ENABLE") else oh,
                     1 if bc.get("broadcast_w", "").endswith("ENABLE") else ow,
                     1 if bc.get("broadcast_c", "").endswith("ENABLE") else oc)
            b = ifm2.read(self.mem, *shape, what + " IFM2", "ELEMENTWISE", cmd.offset) - ifm2.zero_point
        b = np.broadcast_to(b, a.shape)
        if bc.get("operand_order", "").endswith("ORDER_A"):
            a, b = b, a
        opa = (field(regs, "NPU_SET_OPA_SCALE", "scale", 1), field(regs, "NPU_SET_OPA_SCALE", "shift"))
        opb = field(regs, "NPU_SET_OPB_SCALE", "scale", 1)
        if mode.endswith(("ADD", "SUB")):
            if ifm.bits == 32 and ifm.scale_mode.endswith(("OPA_32", "OPB_32")):
                raise InputError(self.path, f"{what}: {ifm.scale_mode} on a 32-bit IFM is not modelled", cmd.offset)
            a, b = scale_operands(a, b, ifm.scale_mode, opa, opb, ifm.bits, ifm.round_mode)
        return self._output_scale(combine(mode, a, b, ofm.round_mode), regs, ifm.bits, ofm)
