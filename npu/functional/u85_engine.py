"""Execute an Ethos-U85 command stream on bytes.

What differs from Ethos-U55/U65 (ethos-u-vela 5.2.0, ``ethos_u85_register_cs_generator.cpp``):
- ``KERNEL_HEIGHT/WIDTH_M1`` hold the dilated kernel size.
- Weights: per-core default streams or one fast-format stream (:mod:`u85_weights`), in the U85
  order (:mod:`u85_order`); the micro-block depth comes from ``ACC_FORMAT``'s micro-block.
- Scales: 10-byte records whose layout follows ``ACC_FORMAT`` (I32 or I48); the rounding mode
  and double-round point are fields of ``OFM_SCALE``/``IFM_SCALE``/``IFM2_SCALE``
  (:mod:`u85_output`). Elementwise inputs are scaled by ``IFM_SCALE``/``IFM2_SCALE``.
- Chaining: an OFM with ``ACTIVATION_STORAGE_CHAINED`` goes to the chain buffer its REGION
  names, not to memory; an IFM/IFM2 with chained storage is read from that buffer.
- The activation lookup tables live in a 2 KB LUT RAM (``ArchEthosU85``'s ``lutram``), filled by
  DMAs whose destination is ``DMA_REGION_MODE_INTERNAL``; table k of an 8-bit LUT is at k * 256.
- Broadcasting is ``IFM_BROADCAST``/``IFM2_BROADCAST``'s ``broadcast_mode`` (H, W, C and
  their combinations, or SCALAR with ``OP_SCALAR``).
"""
from __future__ import annotations

import numpy as np

from npu.errors import InputError
from npu.functional.engine import Engine, Geometry
from npu.functional.fmap import FeatureMap, field, signed16
from npu.functional.kernels.conv import conv2d, depthwise2d
from npu.functional.kernels.pool import max_pool, sum_pool
from npu.functional.u85_order import DEPTH_FIRST, DEPTHWISE, PART_KERNEL, U85Traversal, ifm_block_depth
from npu.functional.u85_output import decode_scales, mode_name, rescale
from npu.functional.u85_weights import decode_u85

LUT_RAM = 2048            # ArchEthosU85: lutram of 2048 bytes, LUT_SLOT_SIZE 256
LUT_SLOT = 256
MICROBLOCKS = {"U1X1": (1, 1), "U1X2": (1, 2), "U1X4": (1, 4), "U2X2": (2, 2), "U2X4": (2, 4), "U4X4": (4, 4)}
BROADCAST = {"NONE": "", "H": "H", "W": "W", "HW": "HW", "C": "C", "CH": "CH", "CW": "CW", "CWH": "CWH"}
ELEMENTWISE = ("ADD", "SUB", "MUL", "MIN", "MAX")
POOLS = ("MAX", "AVERAGE", "SUM")
WEIGHT_SUFFIXES = ("", "1", "2", "3")


def _tail(value: str, prefix: str) -> str:
    return value[len(prefix):] if value.startswith(prefix) else value


class U85Engine(Engine):
    def __init__(self, commands, mem, accelerator, path=None):
        super().__init__(commands, mem, 0, path)
        self.acc = accelerator
        self.shram = np.zeros(LUT_RAM, dtype=np.uint8)     # the LUT RAM: Engine._dma's internal target
        self.chain: dict[int, np.ndarray] = {}
        self.decoded: list = []                             # (stream offset, traversal, weights) when recording
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

    # -- registers -----------------------------------------------------------------------
    def _geometry(self, regs) -> Geometry:
        g = Geometry.from_regs(regs)
        (kh, kw), (dy, dx) = g.kernel, g.dilation
        return Geometry(g.ofm_shape, ((kh - 1) // dy + 1, (kw - 1) // dx + 1), g.stride, g.dilation, g.pad)

    def _scale_reg(self, regs, name: str, what: str, cmd) -> tuple[int, int, str, int]:
        f = regs.get(f"NPU_SET_{name}_SCALE", {})
        dbl = f.get("dbl_rnd", 0)
        if dbl > 30:
            raise InputError(self.path, f"{what}: {name}_SCALE double-round point {dbl} is above 30", cmd.offset)
        return f.get("scale", 1), f.get("shift", 0), mode_name(f.get("round_mode", "ROUND_MODE_OFM_DOUBLE_SYMMETRIC")), dbl

    def _check_supported(self, regs, what, cmd):
        ofm = regs.get("NPU_SET_OFM_PRECISION", {})
        for key, plain in (("activation_transpose", "ACTIVATION_TRANSPOSE_HWC"),
                           ("activation_reverse", "ACTIVATION_REVERSE_NONE")):
            if ofm.get(key, plain) != plain:
                raise InputError(self.path, f"{what}: OFM {ofm[key]} is not modelled", cmd.offset)
        acc = regs.get("NPU_SET_ACC_FORMAT", {})
        if acc.get("acc_input", "ACC_INPUT_RESET") != "ACC_INPUT_RESET" or \
                acc.get("acc_output", "ACC_OUTPUT_ENABLE") != "ACC_OUTPUT_ENABLE":
            raise InputError(self.path, f"{what}: accumulator {acc.get('acc_input')} / {acc.get('acc_output')} "
                                        "(kept across operations) is not modelled", cmd.offset)
        up = regs.get("NPU_SET_IFM_UPSCALE", {}).get("mode", "IFM_UPSCALE_MODE_NONE")
        if up != "IFM_UPSCALE_MODE_NONE":
            raise InputError(self.path, f"{what}: {up} is not modelled", cmd.offset)

    def _storage(self, regs, name: str) -> str:
        return regs.get(f"NPU_SET_{name}_PRECISION", {}).get("activation_storage", "ACTIVATION_STORAGE_TILE2X2")

    def _read(self, regs, fm: FeatureMap, h, w, c, what, op, cmd) -> np.ndarray:
        """An IFM/IFM2 from memory or from its chain buffer, zero point removed."""
        if self._storage(regs, fm.name).endswith("CHAINED"):
            values = self.chain.get(fm.region)
            if values is None or values.shape[0] < h or values.shape[1] < w or values.shape[2] < c:
                have = "nothing" if values is None else "shape " + "x".join(map(str, values.shape))
                raise InputError(self.path, f"{what}: chain buffer {fm.region} holds {have}, the operation reads "
                                            f"{h}x{w}x{c}", cmd.offset)
            return values[:h, :w, :c] - fm.zero_point
        return fm.read(self.mem, h, w, c, what, op, cmd.offset) - fm.zero_point

    # -- kernels -------------------------------------------------------------------------
    def _kernel(self, op: str, regs, cmd):
        what = f"{op} at stream offset 0x{cmd.offset:06x}"
        self._check_supported(regs, what, cmd)
        geo = self._geometry(regs)
        ofm = FeatureMap.from_regs(regs, "OFM")
        oh, ow, oc = geo.ofm_shape
        if op == "ELEMENTWISE":
            values = self._elementwise(regs, cmd, geo, what)
        else:
            ifm = FeatureMap.from_regs(regs, "IFM")
            ic = field(regs, "NPU_SET_IFM_DEPTH_M1", "depth_m1") + 1
            ih, iw = geo.ifm_hw()
            x = self._read(regs, ifm, ih, iw, ic, what + " IFM", op, cmd)
            if op == "POOL":
                values = self._pool(regs, cmd, geo, x, what)
            else:
                values = self._conv(op, regs, cmd, geo, x, ic, ifm.bits, ofm, what)
        out = self._activate(regs, values + ofm.zero_point, ofm, what, cmd)
        out = out.reshape(oh, ow, oc)
        if self._storage(regs, "OFM").endswith("CHAINED"):
            self.chain[ofm.region] = out
        elif self._storage(regs, "OFM").endswith("NONE"):
            raise InputError(self.path, f"{what}: an OFM with no storage is not modelled", cmd.offset)
        else:
            ofm.write(self.mem, out, what + " OFM", op, cmd.offset)

    def _activate(self, regs, out, ofm: FeatureMap, what, cmd):
        """Clamp to the activation range (ACTIVATION_CLIP_RANGE_B16: 16-bit MIN/MAX) and the
        OFM type, then the lookup table."""
        tmin, tmax = (-(1 << (ofm.bits - 1)), (1 << (ofm.bits - 1)) - 1) if ofm.signed else (0, (1 << ofm.bits) - 1)
        act = regs.get("NPU_SET_ACTIVATION", {})
        lo, hi = tmin, tmax
        if act.get("activation_clip_range", "ACTIVATION_CLIP_RANGE_B16").endswith("B16"):
            lo = max(lo, signed16(field(regs, "NPU_SET_ACTIVATION_MIN", "clip_boundary", 0x8000)))
            raw = field(regs, "NPU_SET_ACTIVATION_MAX", "clip_boundary", 0x7FFF)
            hi = min(hi, signed16(raw) if ofm.signed else raw)
        np.maximum(out, lo, out=out)
        np.minimum(out, hi, out=out)
        fn = _tail(act.get("activation_function", "ACTIVATION_FUNCTION_LUT_NONE"), "ACTIVATION_FUNCTION_")
        if fn == "LUT_NONE":
            return out
        if fn not in ("LUT_S8_S8", "LUT_U8_U8") or ofm.bits != 8:
            raise InputError(self.path, f"{what}: activation {fn} on a {ofm.bits}-bit OFM is not modelled", cmd.offset)
        start = act.get("table", 0) * LUT_SLOT
        lut = self.shram[start:start + LUT_SLOT].view(np.int8 if fn == "LUT_S8_S8" else np.uint8)
        return lut[out + (128 if fn == "LUT_S8_S8" else 0)].astype(np.int64)

    def _traversal(self, op, regs, geo, ic, ifm_bits, what, cmd) -> U85Traversal:
        ks = regs.get("NPU_SET_KERNEL_STRIDE", {})
        kind = DEPTHWISE if op == "DEPTHWISE" else (
            PART_KERNEL if ks.get("weight_order", "").endswith("PART_KERNEL_FIRST") else DEPTH_FIRST)
        block = _tail(regs.get("NPU_SET_ACC_FORMAT", {}).get("microblock", "MICROBLOCK_U1X1"), "MICROBLOCK_")
        if block not in MICROBLOCKS:
            raise InputError(self.path, f"{what}: ACC_FORMAT micro-block {block} is unknown", cmd.offset)
        uh, uw = MICROBLOCKS[block]
        ublock = self.acc.macs // (8 * uh * uw)
        sparse = regs.get("NPU_SET_WEIGHT_FORMAT", {}).get("weight_sparsity", "").endswith("SPARSE_2_4")
        oc = geo.ofm_shape[2]
        return U85Traversal(kind, *geo.kernel, 1 if kind == DEPTHWISE else ic, oc,
                            field(regs, "NPU_SET_OFM_BLK_DEPTH_M1", "depth_m1") + 1, ublock,
                            ifm_block_depth(kind, ifm_bits, self.acc.macs, ublock, sparse),
                            self.acc.cores, self.acc.macs, geo.stride, geo.dilation, ifm_bits, sparse)

    def _weight_streams(self, regs, fast: bool, what: str, op, cmd) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
        region = field(regs, "NPU_SET_WEIGHT_REGION", "region")
        streams, lengths = [], []
        for sfx in WEIGHT_SUFFIXES[:1 if fast else self.acc.cores]:
            base = field(regs, f"NPU_SET_WEIGHT{sfx}_BASE", "addr")
            length = field(regs, f"NPU_SET_WEIGHT{sfx}_LENGTH", "length")
            self.mem.record(op, cmd.offset, region, base, base + length, f"weight{sfx or ''}", write=False)
            streams.append(self.mem.read(region, base, length, f"{what} weight stream{sfx and ' ' + sfx}"))
            lengths.append(length)
        return tuple(streams), tuple(lengths)

    def _conv(self, op, regs, cmd, geo, x, ic, ifm_bits, ofm, what):
        oh, ow, oc = geo.ofm_shape
        t = self._traversal(op, regs, geo, ic, ifm_bits, what, cmd)
        fast = regs.get("NPU_SET_WEIGHT_FORMAT", {}).get("weight_format", "").endswith("FWD")
        streams, lengths = self._weight_streams(regs, fast, what, op, cmd)
        w = decode_u85(streams, fast, t, what + " weights", lengths)
        if self.record_weights:
            self.decoded.append((cmd.offset, t, fast, streams, lengths, w))
        if op == "DEPTHWISE":
            acc = depthwise2d(x, w, geo.stride, geo.dilation, geo.pad, (oh, ow), ifm_bits)
        else:
            acc = conv2d(x, w, geo.stride, geo.dilation, geo.pad, (oh, ow), ifm_bits)
        scale, shift, mode, dbl = self._scale_reg(regs, "OFM", what, cmd)
        if ofm.scale_mode.endswith("GLOBAL"):
            return rescale(acc, scale, shift, mode, dbl)
        acc48 = regs.get("NPU_SET_ACC_FORMAT", {}).get("acc_format", "ACC_FORMAT_I32").endswith("I48")
        bias, scale, shift = decode_scales(self._stream(regs, "SCALE", what + " scales", op, cmd), oc, acc48,
                                           what + " scale stream")
        acc += bias
        return rescale(acc, scale, shift, mode, dbl)

    def _pool(self, regs, cmd, geo, x, what):
        oh, ow, oc = geo.ofm_shape
        mode = _tail(cmd.fields.get("pooling_mode", ""), "POOLING_MODE_")
        if mode not in POOLS:
            raise InputError(self.path, f"{what}: pooling mode {cmd.fields.get('pooling_mode') or '?'} "
                                        "is not modelled", cmd.offset)
        x = x[:, :, :oc]
        scale, shift, rmode, dbl = self._scale_reg(regs, "OFM", what, cmd)
        if mode == "MAX":
            return rescale(max_pool(x, geo.kernel, geo.stride, geo.pad, (oh, ow)), scale, shift, rmode, dbl)
        total, count = sum_pool(x, geo.kernel, geo.stride, geo.pad, (oh, ow))
        if mode == "AVERAGE":
            # The average over the kernel elements inside the IFM, rounded half away from zero.
            half = np.asarray(count) // 2
            total = np.where(total >= 0, (total + half) // count, -((-total + half) // count))
        return rescale(total, scale, shift, rmode, dbl)

    def _operand(self, regs, name: str, geo, what, cmd) -> np.ndarray:
        oh, ow, oc = geo.ofm_shape
        mode = _tail(regs.get(f"NPU_SET_{name}_BROADCAST", {}).get("broadcast_mode", "BROADCAST_MODE_NONE"),
                     "BROADCAST_MODE_")
        fm = FeatureMap.from_regs(regs, name)
        if mode == "SCALAR":
            raw = field(regs, "NPU_SET_OP_SCALAR", "scalar")
            value = (raw - (1 << 32) if raw & (1 << 31) else raw) if fm.signed else raw
            return np.full((1, 1, 1), value - fm.zero_point, dtype=np.int64)
        if mode not in BROADCAST:
            raise InputError(self.path, f"{what}: {name} broadcast mode {mode} is unknown", cmd.offset)
        axes = BROADCAST[mode]
        shape = (1 if "H" in axes else oh, 1 if "W" in axes else ow, 1 if "C" in axes else oc)
        return self._read(regs, fm, *shape, f"{what} {name}", "ELEMENTWISE", cmd)

    def _elementwise(self, regs, cmd, geo, what):
        mode = _tail(cmd.fields.get("elementwise_mode", ""), "ELEMENTWISE_MODE_")
        if mode not in ELEMENTWISE:
            raise InputError(self.path, f"{what}: elementwise mode {cmd.fields.get('elementwise_mode') or '?'} "
                                        "is not modelled", cmd.offset)
        a = rescale(self._operand(regs, "IFM", geo, what, cmd), *self._scale_reg(regs, "IFM", what, cmd))
        b = rescale(self._operand(regs, "IFM2", geo, what, cmd), *self._scale_reg(regs, "IFM2", what, cmd))
        a, b = np.broadcast_arrays(a, b)
        combined = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MIN": np.minimum,
                    "MAX": np.maximum}[mode](a, b)
        combined = np.broadcast_to(combined, geo.ofm_shape)
        return rescale(combined, *self._scale_reg(regs, "OFM", what, cmd))
