#ifndef ORDO_CORE_ONNX_SPARSE_INITIALIZERS_H_
#define ORDO_CORE_ONNX_SPARSE_INITIALIZERS_H_

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// Moves every `graph.sparse_initializer` into `graph.initializer` as the
// dense tensor it stands for (zeros where no value is given), so that every
// later stage, and every model ordo writes, reads one kind of initializer.
// The values and indices must be stored in the file (raw_data or the typed
// fields); the indices in either of ONNX's two layouts ([NNZ] linearized or
// [NNZ, rank]). INVALID_ARGUMENT naming the initializer when they are
// external data, of a string type, inconsistent with the dims, or when the
// dense tensors would take over 256 MiB in all. Subgraphs are left as they
// are.
// O(dense bytes).
absl::Status DensifySparseInitializers(onnx::GraphProto& graph);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_SPARSE_INITIALIZERS_H_
