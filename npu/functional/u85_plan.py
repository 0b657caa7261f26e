"""What an Ethos-U85 kernel operation does, read from the registers once.

The register state at an operation is a function of the command stream before it, so a plan
is built the first time an operation runs and kept with the stream (:func:`stream_cache`);
running the stream again only moves bytes. Facts (ethos-u-vela 5.2.0, ``ethos_u85_register_cs_generator.cpp``):
- ``KERNEL_HEIGHT/WIDTH_M1`` hold the dilated kernel size;
- the micro-block ``ACC_FORMAT`` names is MACs / (8 * h * w) deep (the config table of
  ``ethos_u85.cpp``: 1x2x8 and 1x1x16 on U85-128 ... 2x2x64, 1x4x64, 4x4x16 on U85-2048);
- an OFM with ``ACTIVATION_STORAGE_CHAINED`` goes to the chain buffer its REGION names, and an
  IFM/IFM2 with chained storage comes from one;
- ``ACTIVATION_CLIP_RANGE_B16`` clamps to the 16-bit ``ACTIVATION_MIN``/``MAX``; an 8-bit LUT
  (``LUT_S8_S8``, ``LUT_U8_U8``) is 256 bytes at table * 256 of the LUT RAM;
- ``IFM_BROADCAST``/``IFM2_BROADCAST``: H, W, C and their combinations, or SCALAR (``OP_SCALAR``).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from npu.emulate.ops import field
from npu.errors import InputError
from npu.functional.engine import Geometry
from npu.functional.fmap import FeatureMap, signed16
from npu.functional.u85_order import DEPTH_FIRST, DEPTHWISE, PART_KERNEL, U85Traversal, ifm_block_depth
from npu.functional.u85_output import Rounding, global_rounding, mode_name
from npu.functional.u85_transpose import PLAIN, permutation

LUT_SLOT = 256
MICROBLOCKS = {"U1X1": (1, 1), "U1X2": (1, 2), "U1X4": (1, 4), "U2X2": (2, 2), "U2X4": (2, 4), "U4X4": (4, 4)}
BROADCAST = {"NONE": "", "H": "H", "W": "W", "HW": "HW", "C": "C", "CH": "CH", "CW": "CW", "CWH": "CWH"}
ELEMENTWISE = ("ADD", "SUB", "MUL", "MIN", "MAX")
POOLS = ("MAX", "AVERAGE", "SUM")
WEIGHT_SUFFIXES = ("", "1", "2", "3")
MODELS_KEPT = 8


@dataclass(frozen=True)
class Operand:
    """An IFM or IFM2 as the operation reads it."""
    fm: FeatureMap
    chained: bool
    shape: tuple[int, int, int]         # what is read (1 on a broadcast axis)
    scalar: int | None = None           # SCALAR broadcast: the value, zero point removed
    scaling: Rounding | None = None     # elementwise input scaling (IFM_SCALE / IFM2_SCALE)


@dataclass(frozen=True)
class Plan:
    op: str
    what: str
    geo: Geometry
    ofm: FeatureMap
    ofm_chained: bool
    clamp: tuple[int, int]
    lut: tuple[int, bool] | None         # (start in the LUT RAM, signed)
    scaling: Rounding                    # OFM_SCALE as a rounding (global scale, pools, elementwise)
    ofm_scale: tuple[int, int, str, int]
    ifm: Operand | None = None
    ifm2: Operand | None = None
    mode: str = ""                       # pooling or elementwise mode
    traversal: U85Traversal | None = None
    fast: bool = False
    weights: tuple[int, tuple[tuple[int, int], ...]] | None = None   # region, ((base, length) per stream)
    scales: tuple[int, int, int] | None = None                       # region, base, length
    acc48: bool = False
    per_channel: bool = True
    transpose: tuple[int, int, int] | None = None                     # written axes (u85_transpose)


@dataclass
class StreamCache:
    """What a command stream's registers say, worked out once: each kernel operation's plan
    (by stream offset), and the furthest byte the stream reads from region 0."""
    plans: dict
    read_only_end: int | None = None


_streams: OrderedDict[int, tuple[object, StreamCache]] = OrderedDict()


def stream_cache(commands) -> StreamCache:
    """The cache of one command stream, kept while the stream is among the last few run (the
    entry holds the stream, so its id is not reused while it is kept)."""
    entry = _streams.get(id(commands))
    if entry is None or entry[0] is not commands:
        entry = (commands, StreamCache({}))
        _streams[id(commands)] = entry
        while len(_streams) > MODELS_KEPT:
            _streams.popitem(last=False)
    _streams.move_to_end(id(commands))
    return entry[1]


class Planner:
    def __init__(self, accelerator, path):
        self.acc, self.path = accelerator, path

    def fail(self, what: str, cmd):
        raise InputError(self.path, what, cmd.offset)

    def scale_reg(self, regs, name: str, what: str, cmd) -> tuple[int, int, str, int]:
        f = regs.get(f"NPU_SET_{name}_SCALE", {})
        dbl = f.get("dbl_rnd", 0)
        if dbl > 30:
            self.fail(f"{what}: {name}_SCALE double-round point {dbl} is above 30", cmd)
        return f.get("scale", 1), f.get("shift", 0), mode_name(f.get("round_mode", "ROUND_MODE_OFM_DOUBLE_SYMMETRIC")), dbl

    def _storage(self, regs, name: str) -> str:
        return regs.get(f"NPU_SET_{name}_PRECISION", {}).get("activation_storage", "ACTIVATION_STORAGE_TILE2X2")

    def _check_supported(self, regs, what, cmd):
        ofm = regs.get("NPU_SET_OFM_PRECISION", {})
        reverse = ofm.get("activation_reverse", "ACTIVATION_REVERSE_NONE")
        if reverse != "ACTIVATION_REVERSE_NONE":
            self.fail(f"{what}: OFM {reverse} is not modelled", cmd)
        transpose = ofm.get("activation_transpose", PLAIN)
        if transpose != PLAIN:
            if permutation(transpose) is None:
                self.fail(f"{what}: OFM activation_transpose {transpose} names no axis order", cmd)
            if self._storage(regs, "OFM").endswith("CHAINED"):
                self.fail(f"{what}: a chained OFM written transposed ({transpose}) is not modelled", cmd)
        acc = regs.get("NPU_SET_ACC_FORMAT", {})
        if acc.get("acc_input", "ACC_INPUT_RESET") != "ACC_INPUT_RESET" or \
                acc.get("acc_output", "ACC_OUTPUT_ENABLE") != "ACC_OUTPUT_ENABLE":
            self.fail(f"{what}: accumulator {acc.get('acc_input')} / {acc.get('acc_output')} (kept across "
                      "operations) is not modelled", cmd)
        up = regs.get("NPU_SET_IFM_UPSCALE", {}).get("mode", "IFM_UPSCALE_MODE_NONE")
        if up != "IFM_UPSCALE_MODE_NONE":
            self.fail(f"{what}: {up} is not modelled", cmd)
        if self._storage(regs, "OFM").endswith("NONE"):
            self.fail(f"{what}: an OFM with no storage is not modelled", cmd)

    def _activation(self, regs, ofm: FeatureMap, what, cmd):
        lo, hi = (-(1 << (ofm.bits - 1)), (1 << (ofm.bits - 1)) - 1) if ofm.signed else (0, (1 << ofm.bits) - 1)
        act = regs.get("NPU_SET_ACTIVATION", {})
        if act.get("activation_clip_range", "ACTIVATION_CLIP_RANGE_B16").endswith("B16"):
            lo = max(lo, signed16(field(regs, "NPU_SET_ACTIVATION_MIN", "clip_boundary", 0x8000)))
            raw = field(regs, "NPU_SET_ACTIVATION_MAX", "clip_boundary", 0x7FFF)
            hi = min(hi, signed16(raw) if ofm.signed else raw)
        fn = act.get("activation_function", "ACTIVATION_FUNCTION_LUT_NONE").removeprefix("ACTIVATION_FUNCTION_")
        if fn == "LUT_NONE":
            return (lo, hi), None
        if fn not in ("LUT_S8_S8", "LUT_U8_U8") or ofm.bits != 8:
            self.fail(f"{what}: activation {fn} on a {ofm.bits}-bit OFM is not modelled", cmd)
        return (lo, hi), (act.get("table", 0) * LUT_SLOT, fn == "LUT_S8_S8")

    def plan(self, op: str, regs, cmd) -> Plan:
        what = f"{op} at stream offset 0x{cmd.offset:06x}"
        self._check_supported(regs, what, cmd)
        g = Geometry.from_regs(regs)
        (kh, kw), (dy, dx) = g.kernel, g.dilation
        geo = Geometry(g.ofm_shape, ((kh - 1) // dy + 1, (kw - 1) // dx + 1), g.stride, g.dilation, g.pad)
        ofm = FeatureMap.from_regs(regs, "OFM")
        clamp, lut = self._activation(regs, ofm, what, cmd)
        ofm_scale = self.scale_reg(regs, "OFM", what, cmd)
        transpose = permutation(regs.get("NPU_SET_OFM_PRECISION", {}).get("activation_transpose", PLAIN))
        common = dict(op=op, what=what, geo=geo, ofm=ofm, ofm_chained=self._storage(regs, "OFM").endswith("CHAINED"),
                      clamp=clamp, lut=lut, scaling=global_rounding(*ofm_scale), ofm_scale=ofm_scale,
                      transpose=None if transpose == (0, 1, 2) else transpose)
        if op == "ELEMENTWISE":
            mode = cmd.fields.get("elementwise_mode", "").removeprefix("ELEMENTWISE_MODE_")
            if mode not in ELEMENTWISE:
                self.fail(f"{what}: elementwise mode {cmd.fields.get('elementwise_mode') or '?'} is not modelled", cmd)
            return Plan(**common, mode=mode, ifm=self._operand(regs, "IFM", geo, what, cmd),
                        ifm2=self._operand(regs, "IFM2", geo, what, cmd))
        fm = FeatureMap.from_regs(regs, "IFM")
        ic = field(regs, "NPU_SET_IFM_DEPTH_M1", "depth_m1") + 1
        ifm = Operand(fm, self._storage(regs, "IFM").endswith("CHAINED"), (*geo.ifm_hw(), ic))
        if op == "POOL":
            mode = cmd.fields.get("pooling_mode", "").removeprefix("POOLING_MODE_")
            if mode not in POOLS:
                self.fail(f"{what}: pooling mode {cmd.fields.get('pooling_mode') or '?'} is not modelled", cmd)
            return Plan(**common, mode=mode, ifm=ifm)
        if cmd.fields.get("weights_ifm2"):
            self.fail(f"{what}: weights read from IFM2 (a matrix multiply) are not modelled", cmd)
        fast = regs.get("NPU_SET_WEIGHT_FORMAT", {}).get("weight_format", "").endswith("FWD")
        streams = tuple((field(regs, f"NPU_SET_WEIGHT{sfx}_BASE", "addr"), field(regs, f"NPU_SET_WEIGHT{sfx}_LENGTH", "length"))
                        for sfx in WEIGHT_SUFFIXES[:1 if fast else self.acc.cores])
        return Plan(**common, ifm=ifm, traversal=self._traversal(op, regs, geo, ic, fm.bits, what, cmd), fast=fast,
                    weights=(field(regs, "NPU_SET_WEIGHT_REGION", "region"), streams),
                    scales=(field(regs, "NPU_SET_SCALE_REGION", "region"), field(regs, "NPU_SET_SCALE_BASE", "addr"),
                            field(regs, "NPU_SET_SCALE_LENGTH", "length")),
                    acc48=regs.get("NPU_SET_ACC_FORMAT", {}).get("acc_format", "ACC_FORMAT_I32").endswith("I48"),
                    per_channel=not ofm.scale_mode.endswith("GLOBAL"))

    def _traversal(self, op, regs, geo, ic, ifm_bits, what, cmd) -> U85Traversal:
        ks = regs.get("NPU_SET_KERNEL_STRIDE", {})
        kind = DEPTHWISE if op == "DEPTHWISE" else (
            PART_KERNEL if ks.get("weight_order", "").endswith("PART_KERNEL_FIRST") else DEPTH_FIRST)
        block = regs.get("NPU_SET_ACC_FORMAT", {}).get("microblock", "MICROBLOCK_U1X1").removeprefix("MICROBLOCK_")
        if block not in MICROBLOCKS:
            self.fail(f"{what}: ACC_FORMAT micro-block {block} is unknown", cmd)
        uh, uw = MICROBLOCKS[block]
        ublock = self.acc.macs // (8 * uh * uw)
        sparse = regs.get("NPU_SET_WEIGHT_FORMAT", {}).get("weight_sparsity", "").endswith("SPARSE_2_4")
        return U85Traversal(kind, *geo.kernel, 1 if kind == DEPTHWISE else ic, geo.ofm_shape[2],
                            field(regs, "NPU_SET_OFM_BLK_DEPTH_M1", "depth_m1") + 1, ublock,
                            ifm_block_depth(kind, ifm_bits, self.acc.macs, ublock, sparse),
                            self.acc.cores, self.acc.macs, geo.stride, geo.dilation, ifm_bits, sparse)

    def _operand(self, regs, name: str, geo, what, cmd) -> Operand:
        oh, ow, oc = geo.ofm_shape
        broadcast = regs.get(f"NPU_SET_{name}_BROADCAST", {}).get("broadcast_mode", "BROADCAST_MODE_NONE")
        mode = broadcast.removeprefix("BROADCAST_MODE_")
        fm = FeatureMap.from_regs(regs, name)
        scaling = global_rounding(*self.scale_reg(regs, name, what, cmd))
        if mode == "SCALAR":
            raw = field(regs, "NPU_SET_OP_SCALAR", "scalar")
            value = (raw - (1 << 32) if raw & (1 << 31) else raw) if fm.signed else raw
            return Operand(fm, False, (1, 1, 1), value - fm.zero_point, scaling)
        if mode not in BROADCAST:
            self.fail(f"{what}: {name} broadcast mode {mode} is unknown", cmd)
        axes = BROADCAST[mode]
        shape = (1 if "H" in axes else oh, 1 if "W" in axes else ow, 1 if "C" in axes else oc)
        return Operand(fm, self._storage(regs, name).endswith("CHAINED"), shape, None, scaling)
