"""Execute an Ethos-U85 command stream on bytes.

What differs from Ethos-U55/U65 (ethos-u-vela 5.2.0, ``ethos_u85_register_cs_generator.cpp``;
the register side is :mod:`u85_plan`):
- weights: per-core default streams or one fast-format stream (:mod:`u85_weights`), in the U85
  order (:mod:`u85_order`);
- scales: 10-byte records whose layout follows ``ACC_FORMAT`` (I32 or I48); the rounding mode
  and double-round point are fields of ``OFM_SCALE``/``IFM_SCALE``/``IFM2_SCALE``
  (:mod:`u85_output`); elementwise inputs are scaled by ``IFM_SCALE``/``IFM2_SCALE``;
- chaining: a chained OFM stays in its chain buffer, a chained IFM/IFM2 is read from one;
- an OFM may be written with its axes permuted (:mod:`u85_transpose`);
- the activation lookup tables live in a 2 KB LUT RAM (``ArchEthosU85``'s ``lutram``), filled by
  DMAs whose destination is ``DMA_REGION_MODE_INTERNAL``.
"""
from __future__ import annotations

import numpy as np

from npu.errors import InputError
from npu.functional.engine import Engine
from npu.functional.kernels.conv import conv2d, depthwise2d
from npu.functional.kernels.pool import average, max_pool, sum_pool
from npu.functional.u85_output import channel_scaling
from npu.functional.u85_plan import Operand, Plan, Planner, stream_cache
from npu.functional.u85_transpose import written
from npu.functional.u85_weights import decode_u85

LUT_RAM = 2048            # ArchEthosU85: lutram of 2048 bytes, LUT_SLOT_SIZE 256
COMBINE = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MIN": np.minimum, "MAX": np.maximum}


class U85Engine(Engine):
    def __init__(self, commands, mem, accelerator, path=None):
        super().__init__(commands, mem, 0, path)
        self.acc = accelerator
        self.shram = np.zeros(LUT_RAM, dtype=np.uint8)     # the LUT RAM: Engine._dma's internal target
        self.chain: dict[int, np.ndarray] = {}
        self.planner = Planner(accelerator, path)
        self.plans = stream_cache(commands).plans
        self.decoded: list = []               # with record_weights: (offset, traversal, fast, streams, lengths, w)
        self.record_weights = False

    # -- DMA -----------------------------------------------------------------------------
    def _dma(self, regs, cmd):
        src, dst = regs.get("NPU_SET_DMA0_SRC_REGION", {}), regs.get("NPU_SET_DMA0_DST_REGION", {})
        for what, r in (("source", src), ("destination", dst)):
            modes = (r.get("stride_mode", "DMA_STRIDE_MODE_D1"), r.get("idx_mode", "DMA_IDX_MODE_DISABLED"))
            if modes != ("DMA_STRIDE_MODE_D1", "DMA_IDX_MODE_DISABLED"):
                raise InputError(self.path, f"DMA at stream offset 0x{cmd.offset:06x}: {what} "
                                            f"{' / '.join(modes)} is not modelled", cmd.offset)
        if src.get("region_mode", "").endswith("INTERNAL"):
            raise InputError(self.path, f"DMA at stream offset 0x{cmd.offset:06x}: a copy out of the LUT RAM "
                                        "is not modelled", cmd.offset)
        super()._dma(regs, cmd)

    # -- kernels -------------------------------------------------------------------------
    def _kernel(self, op: str, regs, cmd):
        plan = self.plans.get(cmd.offset)
        if plan is None:
            plan = self.plans[cmd.offset] = self.planner.plan(op, regs, cmd)
        if op == "ELEMENTWISE":
            values = self._elementwise(plan, cmd)
        else:
            x = self._read(plan.ifm, plan.what + " IFM", op, cmd)
            values = self._pool(plan, x) if op == "POOL" else self._conv(plan, x, cmd)
        values += plan.ofm.zero_point
        out = self._activate(plan, values)
        if plan.ofm_chained:
            self.chain[plan.ofm.region] = out
        else:
            plan.ofm.write(self.mem, written(out, plan.transpose), plan.what + " OFM", op, cmd.offset)

    def _read(self, operand: Operand, what: str, op: str, cmd) -> np.ndarray:
        """An IFM/IFM2 from memory or from its chain buffer, zero point removed."""
        fm, (h, w, c) = operand.fm, operand.shape
        if operand.scalar is not None:
            return np.full((1, 1, 1), operand.scalar, dtype=np.int64)
        if operand.chained:
            values = self.chain.get(fm.region)
            if values is None or values.shape[0] < h or values.shape[1] < w or values.shape[2] < c:
                have = "nothing" if values is None else "shape " + "x".join(map(str, values.shape))
                raise InputError(self.path, f"{what}: chain buffer {fm.region} holds {have}, the operation reads "
                                            f"{h}x{w}x{c}", cmd.offset)
            return values[:h, :w, :c] - fm.zero_point
        return fm.read(self.mem, h, w, c, what, op, cmd.offset) - fm.zero_point

    def _activate(self, plan: Plan, out: np.ndarray) -> np.ndarray:
        """Clamp to the activation range and the OFM type, then the lookup table."""
        lo, hi = plan.clamp
        np.clip(out, lo, hi, out=out)
        if plan.lut is None:
            return out
        start, signed = plan.lut
        lut = self.shram[start:start + 256].view(np.int8 if signed else np.uint8)
        return lut[out + (128 if signed else 0)].astype(np.int64)

    def _conv(self, plan: Plan, x, cmd):
        oh, ow, oc = plan.geo.ofm_shape
        t, what, op = plan.traversal, plan.what, plan.op
        region, specs = plan.weights
        streams = []
        for i, (base, length) in enumerate(specs):
            self.mem.record(op, cmd.offset, region, base, base + length, f"weight{i or ''}", write=False)
            streams.append(self.mem.read(region, base, length, f"{what} weight stream{i and f' {i}' or ''}"))
        lengths = tuple(length for _, length in specs)
        w = decode_u85(tuple(streams), plan.fast, t, what + " weights", lengths)
        if self.record_weights:
            self.decoded.append((cmd.offset, t, plan.fast, tuple(streams), lengths, w))
        g = plan.geo
        if op == "DEPTHWISE":
            acc = depthwise2d(x, w, g.stride, g.dilation, g.pad, (oh, ow), t.ifm_bits)
        else:
            acc = conv2d(x, w, g.stride, g.dilation, g.pad, (oh, ow), t.ifm_bits)
        if not plan.per_channel:
            return plan.scaling(acc)
        region, base, length = plan.scales
        self.mem.record(op, cmd.offset, region, base, base + length, "scale", write=False)
        stream = self.mem.read(region, base, length, what + " scales")
        bias, scaling = channel_scaling(stream, oc, plan.acc48, *plan.ofm_scale[2:], what + " scale stream")
        acc += bias
        return scaling(acc)

    def _pool(self, plan: Plan, x):
        g = plan.geo
        oh, ow, oc = g.ofm_shape
        x = x[:, :, :oc]
        if plan.mode == "MAX":
            return plan.scaling(max_pool(x, g.kernel, g.stride, g.pad, (oh, ow)))
        total, count = sum_pool(x, g.kernel, g.stride, g.pad, (oh, ow))
        if plan.mode == "AVERAGE":
            # The average over the kernel elements inside the IFM, rounded half away from zero.
            total = average(total, count)
        return plan.scaling(total)

    def _elementwise(self, plan: Plan, cmd):
        a = plan.ifm.scaling(self._read(plan.ifm, plan.what + " IFM", "ELEMENTWISE", cmd))
        b = plan.ifm2.scaling(self._read(plan.ifm2, plan.what + " IFM2", "ELEMENTWISE", cmd))
        combined = COMBINE[plan.mode](a, b)
        if combined.shape != plan.geo.ofm_shape:
            combined = np.broadcast_to(combined, plan.geo.ofm_shape).copy()
        return plan.scaling(combined)
