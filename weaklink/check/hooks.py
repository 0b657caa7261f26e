"""The Ethos-U driver's weak platform hooks, and what the NPU gets when an image overrides them.

The core driver (ethosu_device_u55_u65.c, ethosu_device_u85.c) writes every base address as
`ethosu_address_remap(base_addr[i], i)` to BASEP[i] (and the command stream's address, index -1,
to QBASE), and every REGIONCFG field (QCONFIG for index -1) as `ethosu_config_select(address, i)`
of that remapped address. Its weak defaults are the identity and the memory mode's wiring
(NPU_REGIONCFG_n, NPU_QCONFIG). A strong definition in the image replaces them:

- `ethosu_address_remap`: the NPU gets each address through the SoC's declared local -> global
  aliases (soc.toml `remap`). The override's code is not read: that is an assumption, printed.
  A SoC that declares no alias cannot tell what the override returns: `unknown`.
- `ethosu_config_select`: ports follow the SoC's documented rule (soc.toml `port_rule`); none
  declared: `unknown`.
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record
from npu.report import STREAM_REGION as STREAM
from npu.soc import Soc, region_port, stream_port
from weaklink.read import elfstructs as S

REMAP, CONFIG = "ethosu_address_remap", "ethosu_config_select"
STATES = {True: "overridden", False: "weak default", None: "not linked"}   # from overridden()


def overridden(image, name: str) -> bool | None:
    """True: a strong definition won; False: the weak default; None: not linked."""
    defined = [s for s in image.lookup(name) if s.shndx and s.type == S.STT_FUNC]
    if not defined:
        return None
    return any(s.binding == S.STB_GLOBAL for s in defined)


@dataclass(frozen=True)
class DriverHooks(Record):
    soc: Soc
    memory_mode: str
    remap: bool | None = None           # overridden / weak default / not linked
    config: bool | None = None
    assumptions: tuple[str, ...] = ()
    unknown: str | None = None

    JSON = (f"{REMAP}=remap_state", f"{CONFIG}=config_state", "unknown")

    @property
    def remap_state(self) -> str:
        return STATES[self.remap]

    @property
    def config_state(self) -> str:
        return STATES[self.config]

    def npu_address(self, address: int) -> int:
        return self.soc.remap(address) if self.remap and self.soc.remaps else address

    def port(self, region: int, address: int) -> str:
        default = stream_port(self.soc, self.memory_mode) if region == STREAM else \
            region_port(self.soc, self.memory_mode, region)
        rule = self.soc.port_rule
        return rule.port_for(address, default) if self.config and rule else default

    def ports(self, addresses: dict[int, int]) -> dict[int, str] | None:
        """region (or -1) -> port for every NPU address, when the override changes any."""
        if not (self.config and self.soc.port_rule):
            return None
        return {r: self.port(r, a) for r, a in addresses.items()}


def driver_hooks(image, soc: Soc, memory_mode: str) -> DriverHooks:
    remap, config = overridden(image, REMAP), overridden(image, CONFIG)
    assumed, unknown = [], []
    if remap:
        if soc.remaps:
            windows = "; ".join(f"{r.name} [{r.origin:#x}, {r.origin + r.length:#x}) -> "
                                f"(address & {r.mask:#x}) + {r.target:#x}" for r in soc.remaps)
            assumed.append(f"the image overrides the driver's weak {REMAP} with a strong definition; "
                           f"the NPU is assumed to get each address through {soc.name}'s declared "
                           f"local -> global aliases ({windows}; {_short(soc.remaps[0].source)}): "
                           f"the override's code is not read")
        else:
            unknown.append(f"the image overrides the driver's weak {REMAP} with a strong definition, and "
                           f"{soc.name} declares no address alias: the addresses the NPU gets cannot be "
                           f"told (give --soc with the SoC's remap windows)")
    if config:
        rule = soc.port_rule
        if rule is not None:
            assumed.append(f"the image overrides the driver's weak {CONFIG} with a strong definition; "
                           f"ports are assumed to follow {soc.name}'s documented rule: NPU addresses at "
                           f"or above {rule.at_or_above:#x} go out on {rule.port}, the others on the "
                           f"memory mode's REGIONCFG ({_short(rule.source)}): "
                           f"the override's code is not read")
        else:
            unknown.append(f"the image overrides the driver's weak {CONFIG} with a strong definition, and "
                           f"{soc.name} documents no port rule: the AXI port of each region cannot be told "
                           f"(give --soc with the SoC's port_rule)")
    return DriverHooks(soc, memory_mode, remap, config, tuple(assumed), "; ".join(unknown) or None)


def _short(sources: tuple[str, ...]) -> str:
    """A citation's file and name, without the facts it lists (soc.toml holds those)."""
    return sources[0].split(": ")[0] if sources else "no source"
