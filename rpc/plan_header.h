#ifndef ORDO_RPC_PLAN_HEADER_H_
#define ORDO_RPC_PLAN_HEADER_H_

#include <string>

#include "ordo/v1/compiler_service.pb.h"

namespace ordo::rpc {

// The answer of a compile as a C header (plan.h in the CLI's --out-dir,
// CompileResponse.plan_header with CompileOptions.return_plan_header) for firmware
// that runs the ops itself (generated code, a hand-written or vendor
// runtime) rather than TFLite Micro, which takes only one arena (use
// --emit-tflite there): per pool a buffer size to define in that bank, per
// activation tensor its pool, offset and aligned size, and the op order.
// One pool named "arena" when the device has no pools. A plan that does not
// fit the device (CompileResponse.fits false, a placement that overflows, or
// one arena larger than the limit) stops a build that includes it with
// #error, unless ORDO_PLAN_ALLOW_UNFIT is defined; so does, always, a
// compile without an arena plan. Names are escaped as C string literals;
// pool macros are the pool names upper-cased, anything but letters and
// digits as '_' (with the pool's index added where two would collide, or
// one would be ORDO_POOL_COUNT).
// `model_path` names the file in the header's comment ("": the model's
// name only, as the server has no path).
std::string PlanHeader(const v1::CompileResponse& response, const std::string& model_path);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_PLAN_HEADER_H_
