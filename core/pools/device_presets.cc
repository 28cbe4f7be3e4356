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
      {"stm32h743", "STM32H743: DTCM, AXI SRAM, SRAM1-3 (D2), SRAM4 (D3)",
       {Pool("dtcm", 128 * kKiB, 3.84e9, 3.84e9), Pool("axi_sram", 512 * kKiB, 1.92e9, 1.92e9),
        Pool("d2_sram", 288 * kKiB, 0.96e9, 0.96e9), Pool("sram4", 64 * kKiB, 0.96e9, 0.96e9)}},
      // i.MX RT1170 (NXP IMXRT1170RM rev 1, chapters "FlexRAM" and "On-Chip
      // RAM"; AN12077 "Using the i.MX RT FlexRAM"): Cortex-M7 at 1 GHz with
      // 512 KB FlexRAM, here the default split's 256 KB DTCM on the 2x32-bit
      // D-TCM ports at core clock; OCRAM1 + OCRAM2 (1 MB) on the 64-bit AXI
      // at 240 MHz; HyperRAM on FlexSPI2, 8 bits DDR at 166 MHz (333 MB/s),
      // 8 MB (a 64 Mbit part).
      {"imxrt1170", "i.MX RT1170: DTCM (FlexRAM), OCRAM1+2, external HyperRAM",
       {Pool("dtcm", 256 * kKiB, 8e9, 8e9), Pool("ocram", 1 * kMiB, 1.92e9, 1.92e9),
        OffChipPool("hyperram", 8 * kMiB, 0.333e9, 0.333e9)}},
      // ESP32-S3 (Espressif ESP32-S3 datasheet v1.9 §4.1.2 and TRM §4
      // "System and Memory"; ESP-IDF "Support for External RAM"): 512 KB
      // internal SRAM of which about 320 KB remain for data after code and
      // the IDF, on a 32-bit bus at 240 MHz; octal PSRAM, 8 bits DDR at
      // 80 MHz (160 MB/s), 8 MB.
      {"esp32s3", "ESP32-S3: internal SRAM (data part), octal PSRAM",
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
      {"rp2040", "RP2040: striped SRAM0-3, SRAM4, SRAM5",
       {Pool("sram0_3", 256 * kKiB, 0.532e9, 0.532e9), Pool("sram4", 4 * kKiB, 0.532e9, 0.532e9),
        Pool("sram5", 4 * kKiB, 0.532e9, 0.532e9)}},
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
