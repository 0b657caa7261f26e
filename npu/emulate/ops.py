"""Turn the decoded register commands into the operations the NPU executes.

The NPU keeps every register it was last given; an ``NPU_OP_*`` command starts an
operation with the current register state. This module replays the stream and returns
one record per kernel operation, DMA, wait and stop, each with what it reads and writes
(region, offset, length) and the shapes the cost model needs.
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.decode import Command

KERNEL_OPS = {"NPU_OP_CONV": "CONV", "NPU_OP_DEPTHWISE": "DEPTHWISE", "NPU_OP_POOL": "POOL",
              "NPU_OP_ELEMENTWISE": "ELEMENTWISE", "NPU_OP_RESIZE": "RESIZE"}
BITS = {"ACTIVATION_PRECISION_B8": 8, "ACTIVATION_PRECISION_B16": 16,
        "ACTIVATION_PRECISION_B32": 32, "ACTIVATION_PRECISION_B64": 64}


@dataclass(frozen=True)
class Access:
    """A contiguous range one operation touches in one region."""
    what: str            # IFM, IFM2, OFM, weights, scales, DMA src, DMA dst
    region: int
    offset: int
    length: int
    write: bool
    slack: int = 0       # trailing bytes the hardware may fetch past the data (not judged)


@dataclass(frozen=True)
class FeatureMap:
    region: int
    offset: int
    shape: tuple[int, int, int]       # h, w, c as the cost model sees it
    bits: int
    nhcwb16: bool
    stride: tuple[int, int, int]      # y, x, c strides in bytes
    chained: bool = False             # U85 chaining buffer: never leaves the NPU
    tiles: tuple[tuple[int, int, int], ...] = ()   # (offset, rows, cols) per tile in use

    def _extent(self, rows: int, cols: int) -> int:
        c, (sy, sx, sc) = self.shape[2], self.stride
        if self.nhcwb16:
            return (rows - 1) * sy + (cols - 1) * sx + ((c + 15) // 16 - 1) * sc + 16 * self.bits // 8
        return (rows - 1) * sy + (cols - 1) * sx + (c - 1) * max(sc, 1) + self.bits // 8

    def extent(self) -> int:
        return self._extent(*self.shape[:2])

    @property
    def swapped(self) -> bool:
        """Rows closer together in memory than columns: an NHWC feature map written with its
        H and W strides exchanged, which is how Vela lowers a Transpose on Ethos-U55/U65 (an
        average pool with swapped OFM strides; regor ethos_u55_register_cs_generator.cpp,
        InsertTransposeCommand). An ordinary or sliced (concatenated) NHWC map has the row
        stride at least the row width times the column stride."""
        h, w, _ = self.shape
        return not self.nhcwb16 and h > 1 and w > 1 and self.stride[0] < self.stride[1]

    def ranges(self) -> list[tuple[int, int]]:
        """(offset, length) of each tile: Vela splits a feature map into up to four tiles
        (top-left, top-right, bottom-left, bottom-right) for rolling buffers."""
        if not self.tiles:
            return [(self.offset, self.extent())]
        return [(offset, self._extent(rows, cols)) for offset, rows, cols in self.tiles]


@dataclass(frozen=True)
class KernelOp:
    offset: int
    op: str                                 # CONV, DEPTHWISE, POOL, ELEMENTWISE, RESIZE
    ifm: FeatureMap
    ifm2: FeatureMap | None
    ofm: FeatureMap
    kernel: tuple[int, int]                 # h, w (dilated)
    stride: tuple[int, int]                 # y, x
    block: tuple[int, int, int]             # OFM block h, w, c
    microblock: tuple[int, int] | None      # U85 ACC_FORMAT.microblock as (h, w)
    part_kernel: bool
    acc_wide: bool                          # 40/48-bit accumulators
    weights: tuple[Access, ...]             # one weight stream per core (WEIGHT, WEIGHT1..3)
    scales: tuple[Access, ...]              # SCALE, SCALE1 (U65-512)
    accesses: tuple[Access, ...] = ()
    mode: str = ""                          # ELEMENTWISE_MODE_ADD, POOLING_MODE_MAX, ...
    lut: bool = False                       # a table/sigmoid/tanh activation

    @property
    def chained_input(self) -> bool:
        """U85: an input arrives through the chaining buffer from the previous kernel."""
        return self.ifm.chained or bool(self.ifm2 and self.ifm2.chained)


@dataclass(frozen=True)
class DmaOp:
    offset: int
    src: Access | None                      # None: internal (SHRAM/LUT) side
    dst: Access | None
    length: int


@dataclass(frozen=True)
class Wait:
    offset: int
    kind: str                               # DMA or KERNEL
    outstanding: int                        # continue when at most this many are in flight


@dataclass(frozen=True)
class Stop:
    offset: int


def field(regs, cmd, name, default=0):
    """A field of the register state: the last value `cmd` set, or `default`."""
    return regs.get(cmd, {}).get(name, default)


def dims(regs, prefix: str, tile: str = "") -> tuple[int, int, int]:
    """(height, width, depth) from NPU_SET_<prefix>_HEIGHT<tile>_M1, _WIDTH<tile>_M1, _DEPTH_M1."""
    return (field(regs, f"NPU_SET_{prefix}_HEIGHT{tile}_M1", "height_m1") + 1,
            field(regs, f"NPU_SET_{prefix}_WIDTH{tile}_M1", "width_m1") + 1,
            field(regs, f"NPU_SET_{prefix}_DEPTH_M1", "depth_m1") + 1)


def stride_dilation(regs) -> tuple[tuple[int, int], tuple[int, int]]:
    """((stride y, x), (dilation y, x)) from NPU_SET_KERNEL_STRIDE."""
    ks = regs.get("NPU_SET_KERNEL_STRIDE", {})
    return (tuple((ks.get(f"stride_{a}_msb", 0) << 1 | ks.get(f"stride_{a}_lsb", 0)) + 1 for a in "yx"),
            tuple(2 if ks.get(f"dilation_{a}", "").endswith("X2") else 1 for a in "yx"))


def _tiles(regs, prefix: str, height: int, width: int) -> tuple[tuple[int, int, int], ...]:
    """The tiles a feature map of height x width occupies: tile 0 is HEIGHT0 x WIDTH0 at
    BASE0, tile 1 right of it (HEIGHT1 rows) at BASE1, tiles 2 and 3 below them."""
    h0 = field(regs, f"NPU_SET_{prefix}_HEIGHT0_M1", "height_m1") + 1
    h1 = field(regs, f"NPU_SET_{prefix}_HEIGHT1_M1", "height_m1") + 1
    w0 = field(regs, f"NPU_SET_{prefix}_WIDTH0_M1", "width_m1", width - 1) + 1
    base = [field(regs, f"NPU_SET_{prefix}_BASE{i}", "addr") for i in range(4)]
    tiles = [(base[0], min(h0, height), min(w0, width))]
    if width > w0:
        tiles.append((base[1], min(h1, height), width - w0))
    if height > h0:
        tiles.append((base[2], height - h0, min(w0, width)))
    if height > h1 and width > w0:
        tiles.append((base[3], height - h1, width - w0))
    return tuple(tiles)


def _fm(regs, prefix: str, shape, extent_hw=None) -> FeatureMap:
    fmt = field(regs, f"NPU_SET_{prefix}_PRECISION", "activation_format", "ACTIVATION_FORMAT_NHWC")
    bits = BITS.get(field(regs, f"NPU_SET_{prefix}_PRECISION", "activation_precision"), 8)
    stride = tuple(field(regs, f"NPU_SET_{prefix}_STRIDE_{a}", "addr") for a in "YXC")
    storage = field(regs, f"NPU_SET_{prefix}_PRECISION", "activation_storage", "")
    tiles = _tiles(regs, prefix, *(extent_hw or shape[:2]))
    return FeatureMap(field(regs, f"NPU_SET_{prefix}_REGION", "region"),
                      field(regs, f"NPU_SET_{prefix}_BASE0", "addr"), shape, bits, fmt.endswith("NHCWB16"), stride,
                      storage.endswith("CHAINED"), tiles)


def _streams(regs, name: str, what: str, suffixes, slack: int) -> tuple[Access, ...]:
    """The weight (or scale) streams an op reads: one per core that has a length set."""
    region = field(regs, f"NPU_SET_{name}_REGION", "region")
    out = []
    for sfx in suffixes:
        length = field(regs, f"NPU_SET_{name}{sfx}_LENGTH", "length")
        if length or not sfx:
            out.append(Access(what, region, field(regs, f"NPU_SET_{name}{sfx}_BASE", "addr"), length, False, slack))
    return tuple(out)


def _transposed(regs, shape):
    """The OFM as it lies in memory. The U85 OFM_PRECISION.activation_transpose field names the
    output's axes in terms of the input's (WCH: output H is input W, ...); the OFM_HEIGHT/WIDTH/
    DEPTH registers keep the unpermuted order, the OFM strides describe the permuted map
    (ethos-u85 register interface, NPU_SET_OFM_PRECISION). Vela's estimate takes the permuted
    OFM (regor's scheduler prints the Transpose with its output shape)."""
    order = field(regs, "NPU_SET_OFM_PRECISION", "activation_transpose", "")
    axes = order.rsplit("_", 1)[-1] if order else "HWC"
    if sorted(axes) != ["C", "H", "W"]:
        return shape
    return tuple(shape["HWC".index(a)] for a in axes)


def broadcast(regs, prefix: str, shape) -> tuple[tuple[int, int, int], bool]:
    """(the h, w, c an elementwise operand is read as, whether it is a scalar and read from no
    memory). The NPU reads a broadcast axis once and repeats it: the operand in memory has 1
    there. Ethos-U55/U65 ``IFM2_BROADCAST``: ``broadcast_h``/``_w``/``_c``, and
    ``broadcast_constant`` (the value is ``IFM2_SCALAR``); Ethos-U85 ``IFM_BROADCAST`` and
    ``IFM2_BROADCAST``: ``broadcast_mode`` NONE, H, W, HW, C, CH, CW, CWH or SCALAR (the value is
    ``OP_SCALAR``) (ethos-u55/u85 register interfaces; regor ``GenerateIFM2Broadcast``,
    ``CalculateBroadcast``)."""
    r = regs.get(f"NPU_SET_{prefix}_BROADCAST", {})
    if "broadcast_mode" in r:
        axes = r["broadcast_mode"].removeprefix("BROADCAST_MODE_")
        if axes == "SCALAR":
            return (1, 1, 1), True
        axes = "" if axes == "NONE" else axes
    else:
        if r.get("broadcast_constant", "").endswith("_ENABLE"):
            return (1, 1, 1), True
        axes = "".join(a for a in "HWC" if r.get(f"broadcast_{a.lower()}", "").endswith("_ENABLE"))
    return tuple(1 if a in axes else n for a, n in zip("HWC", shape)), False


def _kernel_op(regs, cmd: Command, microblocks, weight_overfetch: int) -> KernelOp:
    op = KERNEL_OPS[cmd.command]
    (sy, sx), (dy, dx) = stride_dilation(regs)
    kh = (field(regs, "NPU_SET_KERNEL_HEIGHT_M1", "height_m1") * dy) + 1
    kw = (field(regs, "NPU_SET_KERNEL_WIDTH_M1", "width_m1") * dx) + 1
    if op == "ELEMENTWISE":
        kh = kw = sy = sx = 1
    ofm_shape, ifm_shape = dims(regs, "OFM"), dims(regs, "IFM", "0")
    ifm_scalar = False
    if op == "ELEMENTWISE":           # elementwise operands have the OFM's shape, broadcast aside
        ifm_shape, ifm_scalar = broadcast(regs, "IFM", ofm_shape)
        ifm_hw = ifm_shape[:2]
    else:                             # the IFM rows and columns the kernel reads
        pad = {side: field(regs, f"NPU_SET_IFM_PAD_{side}", "pad") for side in ("TOP", "BOTTOM", "LEFT", "RIGHT")}
        ifm_hw = (max((ofm_shape[0] - 1) * sy + kh - pad["TOP"] - pad["BOTTOM"], 1),
                  max((ofm_shape[1] - 1) * sx + kw - pad["LEFT"] - pad["RIGHT"], 1))
    ofm, ifm = _fm(regs, "OFM", _transposed(regs, ofm_shape)), _fm(regs, "IFM", ifm_shape, ifm_hw)
    ifm2 = None
    if op == "ELEMENTWISE":
        ifm2_shape, scalar = broadcast(regs, "IFM2", ofm_shape)
        if not scalar and "NPU_SET_IFM2_REGION" in regs:
            ifm2 = _fm(regs, "IFM2", ifm2_shape)
    block = dims(regs, "OFM_BLK")
    acc = regs.get("NPU_SET_ACC_FORMAT", {})
    mb = None
    if microblocks and "microblock" in acc:
        names = ("U1X1", "U1X2", "U1X4", "U2X2", "U2X4", "U4X4")
        tail = acc["microblock"].rsplit("_", 1)[-1]
        mb = microblocks[names.index(tail)] if tail in names else None
    weights = scales = ()
    if op in ("CONV", "DEPTHWISE"):
        weights = _streams(regs, "WEIGHT", "weights", ("", "1", "2", "3"), weight_overfetch)
        scales = _streams(regs, "SCALE", "scales", ("", "1"), 0)
    accesses = [Access(what, fm.region, offset, length, what == "OFM")
                for what, fm in (("IFM", None if ifm_scalar else ifm), ("IFM2", ifm2), ("OFM", ofm))
                if fm and not fm.chained
                for offset, length in fm.ranges()]
    accesses += [a for a in weights + scales if a.length]
    activation = field(regs, "NPU_SET_ACTIVATION", "activation_function", "")
    mode = cmd.fields.get("elementwise_mode") or cmd.fields.get("pooling_mode") or ""
    return KernelOp(cmd.offset, op, ifm, ifm2, ofm, (kh, kw), (sy, sx), block, mb,
                    field(regs, "NPU_SET_KERNEL_STRIDE", "weight_order", "").endswith("PART_KERNEL_FIRST"),
                    acc.get("acc_format", "ACC_FORMAT_I32") != "ACC_FORMAT_I32", weights, scales, tuple(accesses),
                    mode, activation not in ("", "ACTIVATION_FUNCTION_RELU", "ACTIVATION_FUNCTION_LUT_NONE"))


def _dma_op(regs, cmd: Command) -> DmaOp:
    length = field(regs, "NPU_SET_DMA0_LEN", "addr") or field(regs, "NPU_SET_DMA0_LEN", "length")

    def side(prefix, write):
        r = regs.get(f"NPU_SET_DMA0_{prefix}_REGION", {})
        if r.get("region_mode", "DMA_REGION_MODE_EXTERNAL") != "DMA_REGION_MODE_EXTERNAL":
            return None
        return Access(f"DMA {prefix.lower()}", r.get("region", 0), field(regs, f"NPU_SET_DMA0_{prefix}", "addr"),
                      length, write)
    return DmaOp(cmd.offset, side("SRC", False), side("DST", True), length)


def operations(commands, microblocks=None, weight_overfetch: int = 0) -> list:
    """Replay the stream: a list of KernelOp, DmaOp, Wait and a final Stop."""
    regs: dict[str, dict] = {}
    out = []
    for cmd in commands:
        name = cmd.command
        if name.startswith("NPU_SET_"):
            regs[name] = cmd.fields
        elif name in KERNEL_OPS:
            out.append(_kernel_op(regs, cmd, microblocks, weight_overfetch))
        elif name == "NPU_OP_DMA_START":
            out.append(_dma_op(regs, cmd))
        elif name == "NPU_OP_DMA_WAIT":
            out.append(Wait(cmd.offset, "DMA", cmd.fields.get("k", 0)))
        elif name == "NPU_OP_KERNEL_WAIT":
            out.append(Wait(cmd.offset, "KERNEL", cmd.fields.get("n", 0)))
        elif name == "NPU_OP_STOP":
            out.append(Stop(cmd.offset))
    return out


def op_accesses(op) -> tuple[Access, ...]:
    """The ranges one replayed operation touches (none for waits and stop)."""
    if isinstance(op, KernelOp):
        return op.accesses
    if isinstance(op, DmaOp):
        return tuple(a for a in (op.src, op.dst) if a is not None)
    return ()
