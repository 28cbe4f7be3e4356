#ifndef ORDO_RPC_SERVER_REFLECTION_V1_H_
#define ORDO_RPC_SERVER_REFLECTION_V1_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/descriptor.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpcpp/server_builder.h"

namespace ordo::rpc {

// grpc.reflection.v1.ServerReflection, the version current clients
// (grpcurl, Postman, Kreya, grpcui) ask for first; gRPC 1.51's plugin
// serves only v1alpha, whose messages are the same under another package.
// Answers from `pool` (the generated pool: every compiled-in .proto):
//  - list_services: the services of the server it was added to;
//  - file_by_filename, file_containing_symbol, file_containing_extension:
//    the file and all files it imports, each once per answer;
//  - all_extension_numbers_of_type;
// anything not found gets an error_response (NOT_FOUND) and the stream
// goes on. Callback API: an open stream holds no thread while it waits for
// the client's next request (gRPC's own v1alpha, sync, holds one per
// stream; grpcurl and IDEs keep sessions open). Thread-safe.
class ServerReflectionV1 final : public grpc::reflection::v1::ServerReflection::CallbackService {
 public:
  explicit ServerReflectionV1(
      const google::protobuf::DescriptorPool* pool =
          google::protobuf::DescriptorPool::generated_pool());

  void SetServiceNames(std::vector<std::string> names);

  grpc::ServerBidiReactor<grpc::reflection::v1::ServerReflectionRequest,
                          grpc::reflection::v1::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* context) override;

  grpc::reflection::v1::ServerReflectionResponse Answer(
      const grpc::reflection::v1::ServerReflectionRequest& request) const;

 private:
  const google::protobuf::DescriptorPool* pool_;  // must outlive the service
  mutable absl::Mutex mu_;
  std::vector<std::string> service_names_ ABSL_GUARDED_BY(mu_);
};

// Serves ServerReflectionV1 from the server `builder` builds, listing every
// service that server registers (itself included). Call before
// BuildAndStart.
void AddServerReflectionV1(grpc::ServerBuilder& builder);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SERVER_REFLECTION_V1_H_
