"""npu: a cycle-approximate Ethos-U emulator that runs real Vela command streams.

Pipeline: read (npz / tflite / vela_bin_stream blob / COP1) -> decode (Vela's command names)
-> driver checks (``ethosu_invoke_v3``) -> bind regions to SoC memories and AXI ports ->
execute (kernels in order, DMA concurrently) -> report (table or JSON).

Public API, in ``npu.api``
--------------------------
``load_model(source, path=None) -> Model``
    ``source`` is a path or bytes of a Vela raw ``.npz``, a Vela-compiled ``.tflite``, an
    ExecuTorch ``vela_bin_stream`` blob or a bare COP1 payload. ``Model.commands`` is the
    decoded stream (``Command.offset/command/param/payload/fields``, ``Command.to_json()``),
    ``Model.region_sizes`` what the container says each region needs, ``Model.cop1`` the
    parsed payload. Bad input raises :class:`InputError` (``path``, ``what``, ``offset``).

``run(model, *, accelerator, system_config, memory_mode, soc=None, bases=None,
      vela_ini=None, stream_address=0, fast_memory=0, fast_memory_size=0,
      budget=10_000_000_000) -> RunResult``
    ``model`` is a Model or anything ``load_model`` takes. ``accelerator`` is a Vela name
    (``ethos-u85-256``); ``system_config``/``memory_mode`` are vela.ini sections (the bundled
    Arm/vela.ini unless ``vela_ini`` names a user's file). ``soc`` is ``corstone-300`` or
    ``corstone-320`` (default: 300 for U55/U65, 320 for U85). ``bases`` is a list of
    ``Base(region, address, size)`` as passed to ``ethosu_invoke_v3`` (size 0 = not given;
    a region the stream uses but ``bases`` omits has BASEP 0). Without ``bases`` each
    region sits in the memory Vela assumes for the memory mode, sized as the container
    says. ``stream_address`` (0 = not given) is where the COP1 payload lives: checked for
    16-byte alignment and fetched through the QCONFIG port. ``fast_memory`` and
    ``fast_memory_size`` are what ``ethosu_init`` was given (fast-memory substitution of
    base 2). ``budget`` bounds the cycles before a stall is declared a hang.

``RunResult``
    ``status`` (``ok`` | ``hang`` | ``error``), ``diagnosis`` (for a hang: the command
    offset, region, base, offset, address, AXI port and why the address is unreachable; for
    an error: the out-of-bounds range or the driver check that failed), ``cycles`` (total,
    npu, sram/dram/onchip_flash/offchip_flash access), ``pmu`` (NPU active/idle/total
    cycles, AXI read/write beats per port), ``traffic`` (bytes per memory),
    ``region_traffic`` (per region: feature maps, weights, scales, DMA), ``operations``
    (per-op rows keyed as Vela's per-layer columns: cycles, npu, *_access, macs, util_mac),
    ``inference_time_s``, ``bases`` (``BaseReport``: region, address, size, memory, port),
    ``exit_code``, ``to_json()`` (docs/json-contract.md, schema_version 1), ``dumps()``,
    ``to_table()``.

``region_needs(model, accelerator) -> {region: bytes}``
    How far into each region the stream reaches (the size a caller's base must cover).

``Base``, ``InputError`` (``npu.errors``) and ``plot_timeline(result, path)`` (in ``npu.plot``)
complete it.

Example (the U85 Dedicated_Sram_384KB fixture with the fast scratch left at 0)::

    import npu.api
    result = npu.api.run("tiny.bin", accelerator="ethos-u85-256", system_config="Ethos_U85_SYS_DRAM_Mid",
                         memory_mode="Dedicated_Sram_384KB", soc="corstone-320",
                         bases=[npu.api.Base(0, 0x70000000, 51136), npu.api.Base(1, 0x70100000, 8192),
                                npu.api.Base(2, 0, 0)])
    result.status        # "hang"; result.diagnosis names offset 0x000124, region 2, base 0, ...
    result.to_json()     # the JSON contract, docs/json-contract.md
Hardware data: ``npu/data/{accelerators,regioncfg,soc}.toml``, ``vela.ini`` and the command
tables generated from Vela's C++ headers by ``npu/tools/extract_interface.py``.
"""
