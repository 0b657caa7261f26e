"""Cycle costs: small pure functions ``(config, query) -> cycles``.

The formulas follow Vela's regor estimator (``ethos_u55_performance.cpp``,
``ethos_u85_performance.cpp``, docs/npu.md §2), evaluated on what the command stream
itself says: OFM/IFM shapes, strides, block config, microblock, kernel, weight lengths.
Per operation: compute cycles from MACs per cycle and the block config, access cycles per
memory from bytes / channel bandwidth (with burst efficiency), and the op takes the max.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from npu.emulate.ops import FeatureMap, KernelOp
from npu.hw import Accelerator, Memory

SUBKERNEL = (8, 8)
# regor MemChannel; channel_rbs in accelerators.toml is indexed by channel - 1.
NONE, MEM2MEM, IFM_STREAM, WEIGHT, FAST_WEIGHT, IFM, SCALE, WRITE = range(8)
MAC_OPS = ("CONV", "DEPTHWISE", "POOL")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


# What the traffic is, as the tally asks: (region, kind, direction) -> bytes, with
# kind one of these and direction "read" or "write".
FEATURE_MAPS, WEIGHTS, SCALES, DMA = "feature_maps", "weights", "scales", "dma"


@dataclass(frozen=True)
class OpCost:
    npu: int                          # compute cycles
    macs: int
    access: dict[str, int]            # Vela memory class -> access cycles
    transfers: dict[tuple[int, str, str], int]   # (region, kind, direction) -> data bytes
    channels: dict[str, dict[int, int]] = field(default_factory=dict)   # memory -> channel -> cycles
    bus_bytes: dict[str, int] = field(default_factory=dict)             # memory -> bytes on the bus

    @property
    def cycles(self) -> int:
        return max([self.npu, *self.access.values()])


# ----------------------------------------------------------------------------- memory
def channel_bw(acc: Accelerator, mem: Memory, channel: int) -> float:
    """Sustained bytes/cycle of one memory channel (U85: read-buffer and outstanding limits)."""
    if not acc.is_u85:
        return mem.bandwidth
    words = max(mem.burst_length // 16, 1)
    if channel in (NONE, WRITE):
        outstanding = mem.max_writes if channel == WRITE else mem.max_reads
        latency = mem.write_latency if channel == WRITE else mem.read_latency
        rb_lim = math.inf
    else:
        outstanding, latency = mem.max_reads, mem.read_latency
        rb_lim = acc.channel_rbs[channel - 1] / words
    # A class with no outstanding transactions for this direction (a flash's max_writes = 0) still
    # moves one at a time when a placement makes the NPU write there.
    util = min(rb_lim, max(outstanding, 1) * mem.ports_used * 0.8)
    return min(mem.bandwidth, mem.burst_length * util / max(latency, 1) * 0.8)


def mem2mem_cycles(acc: Accelerator, src: Memory, dst: Memory, size: int) -> int:
    """A DMA copy: the slower of reading the source and writing the destination."""
    read = int(size / channel_bw(acc, src, MEM2MEM)) + src.read_latency
    write = int(size / channel_bw(acc, dst, WRITE)) + dst.write_latency
    return max(read, write)


def burst_bytes(is_read: bool, mem: Memory, fm: FeatureMap, block, elements: int) -> int:
    """Bytes the bus moves for `elements`, scaled by how short the bursts are."""
    bits, (_, w, c) = fm.bits, fm.shape
    bh, bw, bc = block
    burst = 8
    if fm.nhcwb16:
        burst = bits * bw * bc if w * bits * 16 // 8 == bc else 16 * bits * bw
    else:
        x_stride = c * bits // 8
        if is_read:
            burst = bits * bw * bc if x_stride == bc else bits * bc
        elif bc <= 16 and x_stride == bc:
            burst = bits * bw * bc
        else:
            burst = min(64 * 8, 16 * bits, bc * bits)
    burst_len = max(min(mem.burst_length, burst // 8), 1)
    return elements * bits // 8 * mem.burst_length // burst_len


def min_block_cycles(is_read: bool, mem: Memory, fm: FeatureMap, block) -> int:
    elements = math.prod(min(a, b) for a, b in zip(fm.shape, block))
    latency = mem.read_latency if is_read else mem.write_latency
    return latency + int(burst_bytes(is_read, mem, fm, block, elements) / mem.bandwidth)


# ----------------------------------------------------------------------------- compute
def ofm_ublock(acc: Accelerator, op: KernelOp) -> tuple[int, int, int]:
    if acc.is_u85 and op.microblock:
        h, w = op.microblock
        return (h, w, max(acc.macs // (h * w * 8), 1))
    return tuple(acc.ofm_ublock)


def ifm_block(acc: Accelerator, op: KernelOp) -> tuple[int, int, int]:
    """The IFM block the hardware fetches for one OFM block (regor GetArchIFMBlockSize);
    not clipped to the IFM (burst lengths use the unclipped depth)."""
    bh, bw, bc = op.block
    uh, uw, ud = ofm_ublock(acc, op)
    au_h, au_w = acc.ifm_alloc_unit(uh, uw) if acc.is_u85 else (uh, uw)
    h = cdiv((bh - 1) * op.stride[0] + op.kernel[0], au_h) * au_h
    w = cdiv((bw - 1) * op.stride[1] + op.kernel[1], au_w) * au_w
    if op.op != "CONV":
        return (h, w, bc)
    if acc.is_u85:
        c = 16 if op.part_kernel else (32 if acc.macs in (128, 256) and ud == 16 else 64)
    else:
        c = cdiv(min(op.ifm.shape[2], 16 if op.part_kernel else 32), 8) * 8
    return (h, w, c)


def clipped(block, shape) -> tuple[int, int, int]:
    return tuple(min(a, b) for a, b in zip(block, shape))


def mac_cycles_per_block(acc: Accelerator, op: KernelOp, iblk, oblk, ublk) -> int:
    bits = op.ifm.bits
    nu = [cdiv(a, b) for a, b in zip(oblk, ublk)]
    nu_wh, nu_d = nu[0] * nu[1], nu[2]
    wb = 32 * ublk[2] // (8 * (acc.cores if acc.is_u85 else 1))
    conv = op.op == "CONV"
    total = 0
    for x in range(0, op.kernel[1], SUBKERNEL[1]):
        for y in range(0, op.kernel[0], SUBKERNEL[0]):
            elems = min(op.kernel[0] - y, SUBKERNEL[0]) * min(op.kernel[1] - x, SUBKERNEL[1])
            if op.op == "POOL":
                steps, cyc = 1, max(4, elems) * nu_wh * nu_d * (bits // 2)
            elif op.op == "DEPTHWISE":
                steps = cdiv(elems, 4)
                cyc = max(wb, 4 * nu_wh * (bits // 8)) * steps * nu_d
            elif not op.part_kernel:
                steps = elems
                per = (iblk[2] // 8 * nu_wh) if acc.is_u85 else 4 * nu_wh
                cyc = max(wb, per) * steps * nu_d * (bits // 8 if acc.is_u85 else 1)
            else:
                steps = cdiv(elems, 2 if bits == 16 else 4)
                cyc = max(wb, 4 * nu_wh) * steps * nu_d * cdiv(iblk[2], 8)
            delay_unit = 3 if op.acc_wide and acc.macs <= 128 else 2
            delay = 0
            if nu_wh == 1:
                delay = delay_unit * steps if nu_d == 1 else (delay_unit * (steps - 1) * nu_d if steps > 1 else 0)
            if conv and op.part_kernel:
                delay *= cdiv(iblk[2], 8)
            total += cyc + delay
    if conv:
        total *= cdiv(op.ifm.shape[2], iblk[2])
    return total if acc.is_u85 else total // acc.cores


def ao_cycles_per_element(acc: Accelerator, op: KernelOp) -> float:
    """Output-unit cycles per OFM element: an index into the config's output_cycles table
    (U85: by OFM width; U55/U65: by operation, as regor's EstimateAOCyclesPerElement)."""
    if acc.is_u85:
        return acc.output_cycles[{8: 0, 16: 1, 32: 2, 64: 3}.get(op.ofm.bits, 2)]
    if op.op == "ELEMENTWISE" and op.ifm.bits == 32:
        index = 1 if op.ifm2 is not None else 0
    elif op.mode.endswith("_MUL"):
        index = 2 if op.ofm.bits == 32 else 3
    elif op.op != "ELEMENTWISE" and op.acc_wide:
        index = 3
    elif op.mode.endswith(("_ADD", "_SUB")):
        index = 5                                   # regor: "advanced" add/sub
    elif op.mode == "POOLING_MODE_MAX":
        index = 6
    else:
        index = 7
    activation = acc.activation_cycles[0 if op.lut else 2]
    return max(acc.output_cycles[index], activation)


def is_transpose(acc: Accelerator, op: KernelOp) -> bool:
    """A U55/U65 transpose pass: a 1x1 average pool writing its OFM with swapped strides
    (the U85 transposes in its activation unit instead, costed as an ordinary pool)."""
    return (not acc.is_u85 and op.op == "POOL" and op.mode == "POOLING_MODE_AVERAGE"
            and op.kernel == (1, 1) and op.ofm.swapped)


def transpose_cycles(op: KernelOp, mems: dict[int, Memory], iblk) -> int:
    """Vela does not time a U55/U65 Transpose as the pools it becomes: it costs the whole op by
    its memory traffic, the slower of reading the IFM and writing the OFM, each with its memory
    latency (regor ethos_u55_performance.cpp, EstimateCycles, the Compound-op branch: "default
    estimation based on memory access"). Each pass of the stream is costed the same way."""
    src, dst = mems[op.ifm.region], mems[op.ofm.region]
    oblk = clipped(op.block, op.ofm.shape)
    read = burst_bytes(True, src, op.ifm, iblk, math.prod(op.ifm.shape))
    write = burst_bytes(False, dst, op.ofm, oblk, math.prod(_rounded(op.ofm, op.ofm.shape)))
    return max(int(read / src.bandwidth) + src.read_latency, int(write / dst.bandwidth) + dst.write_latency)


def compute_cycles(acc: Accelerator, op: KernelOp, mems: dict[int, Memory], chained_ao: float = 0.0) -> tuple[int, int]:
    """(cycles, macs) of one kernel operation; `chained_ao` is the AO work per element of
    ops chained behind it (U85), which the output unit does in the same pass."""
    if is_transpose(acc, op):
        return transpose_cycles(op, mems, ifm_block(acc, op)), 0
    ofm = op.ofm.shape
    oblk = clipped(op.block, ofm)
    iblk = ifm_block(acc, op)
    ao = ao_cycles_per_element(acc, op) + chained_ao
    ifm_cyc = min_block_cycles(True, mems[op.ifm.region], op.ifm, iblk)
    iblk = clipped(iblk, op.ifm.shape)
    ofm_cyc = min_block_cycles(False, mems[op.ofm.region], op.ofm, oblk)
    if op.op not in MAC_OPS:
        elements = math.prod(ofm[:2]) * (cdiv(ofm[2], 16) * 16 if op.ofm.nhcwb16 else ofm[2])
        cmd = math.ceil(((max(ifm_cyc, ofm_cyc) / math.prod(op.block)) + ao) / 4 * elements)
        return max(cmd, math.ceil(ao * elements)), 0
    ublk = ofm_ublock(acc, op)
    in_block = math.prod(cdiv(a, b) for a, b in zip(oblk, ublk))
    n_blocks = math.prod(cdiv(a, b) for a, b in zip(ofm, ublk)) / in_block
    ao_block = math.ceil(ao * math.prod(oblk))
    if op.weights:
        ao_block = max(ao_block, 10 * oblk[2] * mems[op.weights[0].region].read_latency / 256)
    mac_block = mac_cycles_per_block(acc, op, iblk, oblk, ublk)
    cmd = ((abs(ofm_cyc - ifm_cyc) if n_blocks > 1 else 0) + mac_block + ao_block) / 4
    mac_b, ao_b = max(mac_block, cmd), max(ao_block, cmd)
    total = int(mac_b * n_blocks) + int(ao_b) if mac_b > ao_b else int(ao_b * n_blocks + mac_b)
    # Vela schedules each stream operation as both the first (IFM block fill) and the last
    # (OFM block drain) of its cascade; the stream does not say which ops were cascaded.
    total += ofm_cyc + ifm_cyc
    macs = op.kernel[0] * op.kernel[1] * math.prod(ofm) * (op.ifm.shape[2] if op.op == "CONV" else 1)
    return total, macs


# ----------------------------------------------------------------------------- traffic
def _rounded(fm: FeatureMap, shape) -> tuple[int, int, int]:
    return (shape[0], shape[1], cdiv(shape[2], 16) * 16 if fm.nhcwb16 else shape[2])


def ifm_shares(acc: Accelerator, ops: list) -> dict[int, float]:
    """Vela costs a layer before it cuts it into OFM-depth slices (one per weight DMA);
    the stream runs each slice, re-reading the IFM. To compare with Vela, each slice gets
    its share of the whole layer's IFM fetch. Returns offset -> factor on the IFM fetch."""
    kernels = [o for o in ops if isinstance(o, KernelOp)]
    shares, i = {}, 0
    while i < len(kernels):
        j, a = i + 1, kernels[i]
        while (j < len(kernels) and kernels[j].op == a.op == "CONV" and kernels[j].ifm == a.ifm
               and kernels[j].block == a.block and kernels[j].kernel == a.kernel
               and kernels[j].ofm.shape[:2] == a.ofm.shape[:2] and kernels[j].ofm.region == a.ofm.region):
            j += 1
        group = kernels[i:j]
        if len(group) > 1:
            depth = sum(o.ofm.shape[2] for o in group)
            merged = cdiv(depth, a.block[2])
            for o in group:
                shares[o.offset] = merged * o.ofm.shape[2] / depth / cdiv(o.ofm.shape[2], a.block[2])
        i = j
    return shares


def element_access(acc: Accelerator, op: KernelOp, ifm_share: float = 1.0) -> dict[str, int]:
    """Elements (or bytes, for weights/scales) each operand moves, as regor counts them."""
    ofm_shape = op.ofm.shape
    out = {"OFM": math.prod(_rounded(op.ofm, ofm_shape))}
    if op.op in MAC_OPS:
        iblk = clipped(ifm_block(acc, op), op.ifm.shape)
        oblk = clipped(op.block, ofm_shape)
        blocks = [cdiv(a, b) for a, b in zip(ofm_shape, oblk)]
        if op.op != "CONV":
            blocks[2] = 1
        subkernels = cdiv(op.kernel[0], SUBKERNEL[0]) * cdiv(op.kernel[1], SUBKERNEL[1])
        fetch = math.prod(_rounded(op.ifm, iblk)[:2]) * _rounded(op.ifm, op.ifm.shape)[2]
        out["IFM"] = int(fetch * subkernels * math.prod(blocks) * ifm_share)
        refetch = blocks[0] * blocks[1]
        if op.weights:
            out["weights"] = refetch * sum(w.length for w in op.weights)
            out["scales"] = refetch * sum(w.length for w in op.scales)
    else:
        out["IFM"] = math.prod(_rounded(op.ifm, op.ifm.shape))
        if op.ifm2 is not None:
            out["IFM2"] = math.prod(_rounded(op.ifm2, op.ifm2.shape))
    return out


def op_cost(acc: Accelerator, op: KernelOp, mems: dict[int, Memory], ifm_share: float = 1.0,
            producer: KernelOp | None = None) -> OpCost:
    """Compute and memory-access cycles of one kernel operation. A chained consumer (U85)
    fetches its external inputs in its producer's IFM blocks, as regor costs the op group."""
    npu, macs = compute_cycles(acc, op, mems)
    elems = element_access(acc, op, ifm_share)
    iblk = ifm_block(acc, producer if producer is not None else op)
    oblk = clipped(op.block, op.ofm.shape)
    stream = op.op in ("ELEMENTWISE", "RESIZE")

    def operand_block(fm):
        """A broadcast operand (1 on an axis the OFM has more of) is fetched in its own shape."""
        return iblk if not stream or fm.shape == op.ofm.shape else clipped(iblk, fm.shape)
    # (region, kind, channel, bus bytes, data bytes, write)
    moves = [(op.ifm.region, FEATURE_MAPS, IFM_STREAM if stream else IFM,
              burst_bytes(True, mems[op.ifm.region], op.ifm, operand_block(op.ifm), elems["IFM"]),
              elems["IFM"] * op.ifm.bits // 8, False),
             (op.ofm.region, FEATURE_MAPS, WRITE, burst_bytes(False, mems[op.ofm.region], op.ofm, oblk, elems["OFM"]),
              elems["OFM"] * op.ofm.bits // 8, True)]
    if op.ifm2 is not None:
        moves.append((op.ifm2.region, FEATURE_MAPS, IFM_STREAM,
                      burst_bytes(True, mems[op.ifm2.region], op.ifm2, operand_block(op.ifm2), elems["IFM2"]),
                      elems["IFM2"] * op.ifm2.bits // 8, False))
    moves = [m for m, fm in zip(moves, (op.ifm, op.ofm, op.ifm2)) if not fm.chained]
    if "weights" in elems:
        moves.append((op.weights[0].region, WEIGHTS, WEIGHT, elems["weights"], elems["weights"], False))
        moves.append((op.scales[0].region, SCALES, SCALE, elems["scales"], elems["scales"], False))
    per_mem: dict[str, dict[int, float]] = {}
    total_bytes: dict[str, int] = {}
    transfers: dict[tuple[int, str, str], int] = {}
    for region, kind, channel, bus, data, write in moves:
        mem = mems[region]
        chans = per_mem.setdefault(mem.name, {})
        chans[channel] = chans.get(channel, 0) + int(bus / channel_bw(acc, mem, channel))
        total_bytes[mem.name] = total_bytes.get(mem.name, 0) + bus
        key = (region, kind, "write" if write else "read")
        transfers[key] = transfers.get(key, 0) + data
    access = access_cycles(acc, mems, per_mem, total_bytes)
    return OpCost(npu, macs, access, transfers, per_mem, total_bytes)


def access_cycles(acc: Accelerator, mems: dict[int, Memory], channels: dict[str, dict[int, int]],
                  bus_bytes: dict[str, int]) -> dict[str, int]:
    """Per memory: all bytes at the memory's bandwidth, or (U85) its busiest channel, which
    its read buffers and outstanding-transaction limits slow down; channels run in parallel."""
    bandwidth = {m.name: m.bandwidth for m in mems.values()}
    out = {}
    for name, chans in channels.items():
        plain = int(bus_bytes[name] / bandwidth[name])
        out[name] = max(plain, max(chans.values())) if acc.is_u85 else plain
    return out


def chained_access(acc: Accelerator, mems: dict[int, Memory], costs: list[OpCost]) -> dict[str, int]:
    """The memory time of a U85 chain: its ops' channels and bytes pooled per memory."""
    channels: dict[str, dict[int, int]] = {}
    bus: dict[str, int] = {}
    for cost in costs:
        for name, chans in cost.channels.items():
            merged = channels.setdefault(name, {})
            for ch, cycles in chans.items():
                merged[ch] = merged.get(ch, 0) + cycles
            bus[name] = bus.get(name, 0) + cost.bus_bytes[name]
    return access_cycles(acc, mems, channels, bus)
