"""ethosu_init's arguments in a Zephyr device's init function (weaklink.bind.zephyrinit), on C
built with the real arm-none-eabi toolchain in Zephyr's shape (include/zephyr/init.h's init
entries, include/zephyr/device.h's const device and config, kernel/init.c's init loop calling
`init_fn(dev)`): the base is read with r0 = the entry's device, once per entry; a config in
writable memory, a direct call of the init function or its address held elsewhere leave it
unknown."""
from __future__ import annotations

import pytest

from weaklink import toolchain
from weaklink.bind import zephyrinit
from weaklink.bind.fastmem import DriverInit
from weaklink.check.board import npu_base
from weaklink.read.image import Image

ZEPHYR = r"""
#include <stddef.h>
#include <stdint.h>
struct ethosu_driver { void *dev; const void *fast; size_t size; };
int ethosu_init(struct ethosu_driver *drv, void *const base_address, const void *fast_memory,
                const size_t fast_memory_size, uint32_t secure_enable, uint32_t privilege_enable)
{
    drv->dev = base_address;
    drv->fast = fast_memory;
    drv->size = fast_memory_size;
    return (int)(secure_enable + privilege_enable) - 2;
}
struct ethosu_dts_info { void *base_addr; uint8_t secure_enable; uint8_t privilege_enable; };
struct device { const char *name; const void *config; const void *api; void *state; void *data; };
struct init_entry { int (*init_fn)(const struct device *dev); const struct device *dev; };

static int ethosu_zephyr_init(const struct device *dev)
{
    const struct ethosu_dts_info *config = dev->config;
    return ethosu_init((struct ethosu_driver *)dev->data, config->base_addr, NULL, 0,
                       config->secure_enable, config->privilege_enable);
}

#ifndef CONFIG_CONST
#define CONFIG_CONST const
#endif
#define NPU(n, base)                                                                          \
    static struct ethosu_driver driver_##n;                                                 \
    static CONFIG_CONST struct ethosu_dts_info ethosu_dts_info_##n = {(void *)(base), 1, 1}; \
    static const struct device __device_dts_ord_##n = {"ethosu", &ethosu_dts_info_##n, NULL, \
                                                       NULL, &driver_##n};                   \
    static const struct init_entry __init___device_dts_ord_##n                               \
        __attribute__((section("z_init_entries"), used)) = {ethosu_zephyr_init,              \
                                                            &__device_dts_ord_##n};
NPU(14, 0x48102000)
#ifdef SECOND
NPU(15, SECOND)
#endif
extern const struct init_entry __start_z_init_entries[], __stop_z_init_entries[];
#ifdef HELD
int (*volatile hook)(const struct device *) = ethosu_zephyr_init;
#endif
int main(void)
{
    for (const struct init_entry *e = __start_z_init_entries; e < __stop_z_init_entries; ++e)
        if (e->init_fn(e->dev))
            return -1;
#ifdef DIRECT
    return ethosu_zephyr_init(&__device_dts_ord_14);
#endif
    return 0;
}
"""


def _image(d, *defines, opt="-Os"):
    (d / "z.c").write_text(ZEPHYR)
    done = toolchain.run("gcc", ["-mcpu=cortex-m55", "-mthumb", opt, *defines, "-nostdlib",
                                 "-fno-inline", "-Wl,-e,main", "z.c", "-o", "z.elf"], cwd=d)
    assert done.returncode == 0, done.stderr
    return Image.from_path(d / "z.elf")


@pytest.mark.parametrize("opt", ["-Os", "-O2"])
def test_the_base_is_read_from_the_devices_config(cross_toolchain, tmp_path, opt):
    image = _image(tmp_path, opt=opt)
    function = image.lookup("ethosu_zephyr_init")[0].address & ~1
    [entry] = zephyrinit.init_entries(image, function)
    assert entry.name == "__init___device_dts_ord_14" and entry.device_name == "__device_dts_ord_14"
    [call] = DriverInit(image).code
    assert call.values[1] == 0x48102000
    assert call.values[0] == image.lookup("driver_14")[0].address
    assert call.values[2] == 0 and call.values[3] == 0
    base = npu_base(DriverInit(image))
    assert base.address == 0x48102000
    assert base.source == (f"r1 of ethosu_init at {call.call_site:#x} (the code before the call, with "
                           "r0 = `__device_dts_ord_14` from Zephyr's init entry "
                           "`__init___device_dts_ord_14`)")


def test_two_npus_that_agree(cross_toolchain, tmp_path):
    image = _image(tmp_path, "-DSECOND=0x48102000")
    calls = DriverInit(image).code
    assert len(calls) == 2 and len({c.call_site for c in calls}) == 1
    assert {c.values[0] for c in calls} == {image.lookup(f"driver_{n}")[0].address for n in (14, 15)}
    base = npu_base(DriverInit(image))
    assert base.address == 0x48102000
    for n in (14, 15):
        assert f"r0 = `__device_dts_ord_{n}` from Zephyr's init entry `__init___device_dts_ord_{n}`" in base.source


def test_two_npus_at_two_bases_are_unknown(cross_toolchain, tmp_path):
    image = _image(tmp_path, "-DSECOND=0x48103000")
    base = npu_base(DriverInit(image))
    assert base.address is None
    assert "pass different base addresses (0x48102000, 0x48103000)" in base.source
    assert "`__init___device_dts_ord_15`" in base.source


def test_a_writable_config_is_no_evidence(cross_toolchain, tmp_path):
    """The config in .data: its reset value is not what the load reads at run time."""
    image = _image(tmp_path, "-DCONFIG_CONST=")
    [call] = DriverInit(image).code
    assert 1 not in call.values and call.values[0] == image.lookup("driver_14")[0].address
    base = npu_base(DriverInit(image))
    assert base.address is None and "holds no constant" in base.source
    assert "`__init___device_dts_ord_14`" in base.source


@pytest.mark.parametrize("define", ["-DDIRECT", "-DHELD"])
def test_another_way_in_leaves_it_unknown(cross_toolchain, tmp_path, define):
    """Called directly, or its address held in a variable: r0 at entry is not only the device."""
    image = _image(tmp_path, define)
    function = image.lookup("ethosu_zephyr_init")[0].address & ~1
    assert zephyrinit.init_entries(image, function) == []
    [call] = DriverInit(image).code
    assert 1 not in call.values and not call.seed
    assert npu_base(DriverInit(image)).address is None
