#ifndef ORDO_CORE_POOLS_DEVICE_PRESETS_H_
#define ORDO_CORE_POOLS_DEVICE_PRESETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/pools/memory_pools.h"

namespace ordo {

// The memory banks of a real chip, for --device and GetInfo.
struct DevicePreset {
  std::string name;  // e.g. "stm32h743"
  std::string description;
  std::vector<MemoryPool> pools;
};

// Every preset ordo ships: STM32H743, i.MX RT1170, ESP32-S3, RP2040,
// STM32F746 (the STM32F746G-DISCO board), nRF5340 (application core),
// RP2350. Sizes and bandwidths come from their reference manuals and
// datasheets (cited in the .cc).
std::vector<DevicePreset> BuiltinDevicePresets();

// The preset named `name`, ignoring case and punctuation ("i.MX RT1170" =
// "imxrt1170"). INVALID_ARGUMENT naming the known presets otherwise.
absl::StatusOr<DevicePreset> FindDevicePreset(absl::string_view name);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_DEVICE_PRESETS_H_
