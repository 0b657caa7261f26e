"""A SoC memory map from a Zephyr build's devicetree (`build/zephyr/zephyr.dts`, the final,
preprocessed source Zephyr writes next to zephyr.elf).

What the devicetree says: the memories (nodes named `memory@…` or `sram@…`, `compatible =
"mmio-sram"`, or with a `zephyr,memory-region` name) with their `reg`, and the NPU (the node with
`compatible = "arm,ethos-u"`: its `reg` is the register page ethosu_init is given, `interrupts`
its IRQ). What it does not say, which NPU port reaches which memory and how fast, is an
assumption the report prints: every memory is assumed reachable through either port, but a TCM
(by its name), which is assumed private to the CPU as on Arm's Corstone-300; its Vela class
comes from its name, and where the system config does not describe that class, its traffic is
timed as the class the config puts on the port.
"""
from __future__ import annotations

import re
from pathlib import Path

from npu.errors import InputError
from npu.soc import Soc, SocMemory

TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|//[^\n]*|<[^>]*>|\[[^\]]*\]|[{};=]|[^\s{};=<>"]+', re.S)


def _tokens(text: str):
    for m in TOKEN.finditer(text):
        t = m.group(0)
        if not t.startswith(("/*", "//")):
            yield t, m.start()


class _Node:
    def __init__(self, name: str, label: str | None, parent):
        self.name, self.label, self.parent = name, label, parent
        self.props: dict[str, list[str]] = {}
        self.children: list[_Node] = []

    def cells(self, key: str, default: int) -> int:
        v = self.props.get(key)
        return int(v[0].strip("<>").split()[0], 0) if v else default

    def strings(self, key: str) -> list[str]:
        return [v[1:-1] for v in self.props.get(key, []) if v.startswith('"')]

    def numbers(self, key: str) -> list[int]:
        out = []
        for v in self.props.get(key, []):
            if v.startswith("<"):
                out += [int(x, 0) for x in v[1:-1].split() if not x.startswith("&")]
        return out


def parse(text: str, path) -> _Node:
    root = _Node("/", None, None)
    node, pending = root, []
    for tok, at in _tokens(text):
        if tok == "{":
            if not pending:
                raise InputError(path, "a node without a name", at)
            label = next((p[:-1] for p in pending if p.endswith(":")), None)
            name = pending[-1]
            child = root if name == "/" and node is root else _Node(name, label, node)
            if child is not root:
                node.children.append(child)
            node, pending = child, []
        elif tok == "}":
            if node.parent is None and node is not root:
                raise InputError(path, "unbalanced '}'", at)
            node, pending = (node.parent or root), []
        elif tok == ";":
            if pending and not pending[0].startswith("/"):
                key = next((p for p in pending if not p.endswith(":")), pending[0])
                rest = pending[pending.index("=") + 1:] if "=" in pending else []
                node.props[key] = [v for v in rest if v != ","]
            pending = []
        else:
            pending.append(tok)
    return root


def _walk(node):
    yield node
    for c in node.children:
        yield from _walk(c)


def _is_memory(n: _Node) -> bool:
    base = n.name.split("@")[0]
    return "@" in n.name and "reg" in n.props and (
        base in ("memory", "sram") or "mmio-sram" in n.strings("compatible")
        or "zephyr,memory-region" in n.props)


def _kind(name: str, n: _Node) -> str:
    low = name.lower()
    if "tcm" in low:
        return "Tcm"
    if "ddr" in low or "dram" in low or n.strings("device_type") == ["memory"] and "sram" not in low:
        return "Dram"
    if "flash" in low:
        return "OffChipFlash"
    return "Sram"


def from_dts(path: str | Path) -> Soc:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(path, f"cannot read devicetree: {exc.strerror or exc}") from None
    root = parse(text, path)
    src = f"{path} (a Zephyr build's devicetree)"
    mems, npu_base, irq = [], [], None
    for n in _walk(root):
        if "arm,ethos-u" in n.strings("compatible"):
            cells = n.parent.cells("#address-cells", 1) if n.parent else 1
            reg = n.numbers("reg")
            if reg:
                npu_base.append(reg[0] if cells == 1 else (reg[0] << 32 | reg[1]))
            ints = n.numbers("interrupts")
            irq = ints[0] if ints else irq
            continue
        if not _is_memory(n):
            continue
        ac = n.parent.cells("#address-cells", 1) if n.parent else 1
        sc = n.parent.cells("#size-cells", 1) if n.parent else 1
        reg = n.numbers("reg")
        step = ac + sc
        if step == 0 or len(reg) % step:
            raise InputError(path, f"node {n.name}: reg has {len(reg)} cells, not pairs of "
                                   f"#address-cells {ac} and #size-cells {sc}")
        label = (n.strings("zephyr,memory-region") or [n.label or n.name])[0]
        for k in range(0, len(reg), step):
            origin = sum(c << (32 * (ac - 1 - i)) for i, c in enumerate(reg[k:k + ac]))
            size = sum(c << (32 * (sc - 1 - i)) for i, c in enumerate(reg[k + ac:k + step]))
            name = label if len(reg) == step else f"{label}#{k // step}"
            kind = _kind(label + " " + n.name, n)
            if kind == "Tcm":
                mems.append(SocMemory(name, origin, size, kind, (), False, (),
                                      f"{path.name}: {name} is assumed private to the CPU (a TCM, by "
                                      f"its name; the devicetree does not say what the NPU reaches)",
                                      "a TCM, assumed private to the CPU", (src,)))
            else:
                mems.append(SocMemory(name, origin, size, kind, ("AXI0", "AXI1"), True, (),
                                      f"{path.name}: the NPU is assumed to reach {name} through either port "
                                      f"(the devicetree does not say which memories the NPU's ports reach), "
                                      f"timed as {kind} (from the node's name and type) where the system "
                                      f"config describes {kind}, else as the class it puts on that port",
                                      None, (src,), port_timing=True))
    if not mems:
        raise InputError(path, "no memory node (memory@…, sram@…, mmio-sram or zephyr,memory-region "
                               "with a reg) in the devicetree")
    return Soc(path.name, ("ethos-u55", "ethos-u65", "ethos-u85"), (), tuple(mems), (), {},
               "the devicetree has no memory node there", (src,), tuple(npu_base), (src,),
               origin=str(path))
