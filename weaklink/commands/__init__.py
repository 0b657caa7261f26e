"""The `weaklink` subcommands, one module each (see weaklink.cli)."""


def add_npu_target(p, soc_help: str) -> None:
    """The NPU a command emulates: Vela's accelerator, system config and memory mode, and the
    SoC memory-map preset (`check` and `run`)."""
    p.add_argument("--accelerator", required=True, help="Vela accelerator config, e.g. ethos-u55-128")
    p.add_argument("--system-config", required=True,
                   help="vela.ini system config, e.g. Ethos_U55_High_End_Embedded")
    p.add_argument("--memory-mode", required=True, help="vela.ini memory mode, e.g. Shared_Sram")
    p.add_argument("--soc", help=soc_help)
