#include "core/pools/device_presets.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ordo {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

// Bandwidths are the bus's peak: width in bytes x clock. The spec's model
// ignores caches and wait states, so only the ratios between banks matter
// for where tensors go; these peaks keep the ratios the hardware has.
MemoryPool Pool(std::string name, int64_t bytes, double read_bps, double write_bps) {
  return {std::move(name), bytes, read_bps, write_bps};
}
MemoryPool OffChipPool(std::string name, int64_t bytes, double read_bps, double write_bps) {
  return {std::move(name), bytes, read_bps, write_bps, true};
}

std::string Normalize(absl::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

}  // namespace

std::vector<DevicePreset> BuiltinDevicePresets() {
  return {
      // STM32H743 (ST RM0433 rev 8, §2.1 "System architecture", §2.3
      // "Memory organization" and its memory map; datasheet DS12110 §3.3):
      // Cortex-M7 at 480 MHz; DTCM 128 KB on the core's 2x32-bit D-TCM
      // ports (8 B x 480 MHz); AXI SRAM 512 KB on the 64-bit AXI matrix at
      // 240 MHz; SRAM1 128 KB, SRAM2 128 KB and SRAM3 32 KB in D2 and SRAM4
      // 64 KB in D3, each on a 32-bit AHB at 240 MHz. SRAM1-3 are one pool:
      // their addresses are contiguous (0x3000_0000-0x3004_7FFF), so a
      // tensor may run from one into the next, and ST's STM32CubeMX linker
      // scripts for the H743 declare them as one region (RAM_D2, 288K,
      // beside DTCMRAM 128K, RAM_D1 512K and RAM_D3 64K). About 1 MB in
      // all, 512 KB at most contiguous.
      {"stm32h743",
       "STM32H743: DTCM, AXI SRAM, SRAM1-3 (D2), SRAM4 (D3)",
       {Pool("dtcm", 128 * kKiB, 3.84e9, 3.84e9), Pool("axi_sram", 512 * kKiB, 1.92e9, 1.92e9),
        Pool("d2_sram", 288 * kKiB, 0.96e9, 0.96e9), Pool("sram4", 64 * kKiB, 0.96e9, 0.96e9)}},
      // i.MX RT1170 (NXP IMXRT1170RM rev 1, chapters "FlexRAM" and "On-Chip
      // RAM"; AN12077 "Using the i.MX RT FlexRAM"): Cortex-M7 at 1 GHz with
      // 512 KB FlexRAM, here the default split's 256 KB DTCM on the 2x32-bit
      // D-TCM ports at core clock; OCRAM1 + OCRAM2 (1 MB) on the 64-bit AXI
      // at 240 MHz; HyperRAM on FlexSPI2, 8 bits DDR at 166 MHz (333 MB/s),
      // 8 MB (a 64 Mbit part).
      {"imxrt1170",
       "i.MX RT1170: DTCM (FlexRAM), OCRAM1+2, external HyperRAM",
       {Pool("dtcm", 256 * kKiB, 8e9, 8e9), Pool("ocram", 1 * kMiB, 1.92e9, 1.92e9),
        OffChipPool("hyperram", 8 * kMiB, 0.333e9, 0.333e9)}},
      // ESP32-S3 (Espressif ESP32-S3 datasheet v1.9 §4.1.2 and TRM §4
      // "System and Memory"; ESP-IDF "Support for External RAM"): 512 KB
      // internal SRAM of which about 320 KB remain for data after code and
      // the IDF, on a 32-bit bus at 240 MHz; octal PSRAM, 8 bits DDR at
      // 80 MHz (160 MB/s), 8 MB.
      {"esp32s3",
       "ESP32-S3: internal SRAM (data part), octal PSRAM",
       {Pool("sram", 320 * kKiB, 0.96e9, 0.96e9), OffChipPool("psram", 8 * kMiB, 0.16e9, 0.16e9)}},
      // RP2040 (Raspberry Pi RP2040 datasheet §2.6.2 "SRAM"): 264 KB in six
      // banks: SRAM0-3 (4 x 64 KB) striped word by word into one 256 KB
      // region at 0x2000_0000, and SRAM4 (0x2004_0000) and SRAM5
      // (0x2004_1000), 4 KB each; each bank is 32 bits wide at the 133 MHz
      // system clock (532 MB/s per access stream). SRAM4 and SRAM5 follow
      // the striped region in the address space, but they stay apart here:
      // the pico-sdk's linker script (memmap_default.ld) declares them as
      // their own regions, SCRATCH_X and SCRATCH_Y, where the two cores'
      // stacks live, so an arena in the 256 KB RAM region cannot run on
      // into them, and what is left of each is a small buffer of its own.
      {"rp2040",
       "RP2040: striped SRAM0-3, SRAM4, SRAM5",
       {Pool("sram0_3", 256 * kKiB, 0.532e9, 0.532e9), Pool("sram4", 4 * kKiB, 0.532e9, 0.532e9),
        Pool("sram5", 4 * kKiB, 0.532e9, 0.532e9)}},
      // STM32F746 on the STM32F746G-DISCO board, the board MCUNet and
      // msf-CNN report on (ST RM0385, §2.1 "System architecture" and its
      // Figure 1; the CMSIS device header stm32f746xx.h in STM32CubeF7,
      // "Peripheral_memory_map"; ST's STM32CubeF7 board support package for
      // the STM32746G-Discovery, stm32746g_discovery_sdram.h, and its
      // FMC_SDRAM example's readme). Cortex-M7; DTCM 64 KB at 0x2000_0000
      // on the core's D-TCM port, two 32-bit interfaces (ST's STM32F7
      // design note, Le Cam and Errouissi, "A smart architecture boosting
      // performance while preserving determinism": dual 32-bit DTCM);
      // SRAM1 240 KB at 0x2001_0000 and SRAM2 16 KB at 0x2004_C000, which
      // the CPU reaches through the AXI-to-AHB bridge's 32-bit AHB buses
      // (RM0385 §2.1: "3x AXI to 32-bit AHB bridge connected to AHB bus
      // matrix"). All three are contiguous (0x2000_0000-0x2004_FFFF), and
      // ST's linker scripts for the board (STM32F746NGHx_FLASH.ld) declare
      // them as one region, RAM 320K, the 320 KB MCUNet budgets for. So,
      // as the STM32H743's SRAM1-3, they are one pool: a tensor may run
      // from DTCM into SRAM1. A pool has one bandwidth, and this one has
      // SRAM1-2's, the slower path for 256 of its 320 KB: DTCM's wider
      // port is not modelled. Keeping DTCM apart would price it right but
      // refuse arenas the board holds: amoeba_cifar with int8 activations
      // (a 288 KiB peak) fits one 320 KiB pool and no placement over 64 KiB
      // + 256 KiB. The board's SDRAM (MT48LC4M32B2B5, 4M x 32 bits) is
      // wired to the FMC with 16 data lines, so 8 MB at 0xC000_0000 is
      // reachable (the BSP's SDRAM_DEVICE_SIZE 0x800000 and
      // FMC_SDRAM_MEM_BUS_WIDTH_16), clocked at HCLK/2
      // (FMC_SDRAM_CLOCK_PERIOD_2). ST's readme: with the SDRAM in use the
      // system clock is limited to 200 MHz (the F7's maximum is 216 MHz),
      // so both pools are at 200 MHz: SRAM 4 B x 200 MHz, SDRAM
      // 2 B x 100 MHz.
      {"stm32f746",
       "STM32F746G-DISCO: SRAM (DTCM+SRAM1+SRAM2), external SDRAM (FMC, 16-bit)",
       {Pool("sram", 320 * kKiB, 0.8e9, 0.8e9), OffChipPool("sdram", 8 * kMiB, 0.2e9, 0.2e9)}},
      // nRF5340 application core (Nordic nRF5340 Product Specification,
      // chapters "Memory" (application core) and "Peripherals"; the
      // nrf5340_cpuapp_qkaa.dtsi Nordic ships in Zephyr): 512 KB of RAM at
      // 0x2000_0000, one region in Nordic's memory map, reached by the CPU,
      // the network core and EasyDMA through the application core's AHB
      // multilayer. The network core's RAM is not modelled: access runs one
      // way only. The PS draws the network core as a master on the
      // application core's AHB multilayer, and says the application core's
      // peripherals are accessible from the network core but the network
      // core's are not accessible from the application core ("for further
      // details, see Memory"), so the application core cannot place
      // tensors in the network core's RAM. With one pool there is no
      // choice of bank and no ratio to keep, and the sources found give no
      // width for the RAM's AHB ports, so the pool has the default
      // bandwidth (kDefaultPoolBytesPerSecond), as a --pool without one.
      {"nrf5340",
       "nRF5340 application core: SRAM",
       {Pool("sram", 512 * kKiB, kDefaultPoolBytesPerSecond, kDefaultPoolBytesPerSecond)}},
      // RP2350 (Raspberry Pi RP2350 datasheet, chapter 1 and §4.2 "SRAM";
      // the pico-sdk's hardware/regs/addressmap.h and memmap_default.ld for
      // the RP2350): 520 KB in ten banks of 32 bits: SRAM0-7 (8 x 64 KB)
      // word-striped four by four over 0x2000_0000-0x2007_FFFF, one flat
      // 512 KB region, and SRAM8 (0x2008_0000) and SRAM9 (0x2008_1000), 4 KB
      // each; the system clock is 150 MHz, so each bank gives 4 B x 150 MHz
      // (600 MB/s per access stream). As on the RP2040, SRAM8 and SRAM9
      // follow the striped region in the address space but stay apart
      // here: the pico-sdk's linker script declares them as SCRATCH_X and
      // SCRATCH_Y, where the two cores' stacks live, and RAM (512k) ends at
      // 0x2008_0000, so an arena in RAM cannot run on into them.
      {"rp2350",
       "RP2350: striped SRAM0-7, SRAM8, SRAM9",
       {Pool("sram0_7", 512 * kKiB, 0.6e9, 0.6e9), Pool("sram8", 4 * kKiB, 0.6e9, 0.6e9),
        Pool("sram9", 4 * kKiB, 0.6e9, 0.6e9)}},
  };
}

absl::StatusOr<DevicePreset> FindDevicePreset(absl::string_view name) {
  std::vector<std::string> names;
  for (DevicePreset& preset : BuiltinDevicePresets()) {
    if (Normalize(preset.name) == Normalize(name)) return std::move(preset);
    names.push_back(preset.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown device \"", name,
                                                 "\"; known devices: ",
                                                 absl::StrJoin(names, ", ")));
}

}  // namespace ordo
