#include "rpc/server_reflection_v1.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/impl/server_builder_plugin.h"
#include "grpcpp/impl/server_initializer.h"

namespace ordo::rpc {
namespace {

using google::protobuf::FileDescriptor;
using grpc::reflection::v1::ServerReflectionRequest;
using grpc::reflection::v1::ServerReflectionResponse;

// Adds `file` and, depth first, every file it imports, skipping those
// already in this answer (clients resolve imports by name).
void AddFileAndImports(const FileDescriptor* file, absl::flat_hash_set<std::string>& sent,
                       grpc::reflection::v1::FileDescriptorResponse& response) {
  if (!sent.insert(file->name()).second) return;
  google::protobuf::FileDescriptorProto proto;
  file->CopyTo(&proto);
  proto.SerializeToString(response.add_file_descriptor_proto());
  for (int i = 0; i < file->dependency_count(); ++i) {
    AddFileAndImports(file->dependency(i), sent, response);
  }
}

void SetError(ServerReflectionResponse& response, grpc::StatusCode code, std::string message) {
  response.mutable_error_response()->set_error_code(code);
  response.mutable_error_response()->set_error_message(std::move(message));
}

void SetFile(ServerReflectionResponse& response, const FileDescriptor* file,
             absl::string_view what) {
  if (file == nullptr) {
    SetError(response, grpc::StatusCode::NOT_FOUND, absl::StrCat(what, " not found"));
    return;
  }
  absl::flat_hash_set<std::string> sent;
  AddFileAndImports(file, sent, *response.mutable_file_descriptor_response());
}

// Registers the service with the server being built and, once that server
// knows all its services, gives their names to the reflection service.
class ReflectionV1Plugin final : public grpc::ServerBuilderPlugin {
 public:
  std::string name() override { return "ordo_server_reflection_v1"; }
  void InitServer(grpc::ServerInitializer* initializer) override {
    initializer->RegisterService(service_);
  }
  void Finish(grpc::ServerInitializer* initializer) override {
    service_->SetServiceNames(*initializer->GetServiceList());
  }
  void ChangeArguments(const std::string& /*name*/, void* /*value*/) override {}
  bool has_sync_methods() const override { return false; }

 private:
  std::shared_ptr<ServerReflectionV1> service_ = std::make_shared<ServerReflectionV1>();
};

class ReflectionV1Option final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->push_back(std::make_unique<ReflectionV1Plugin>());
  }
};

}  // namespace

ServerReflectionV1::ServerReflectionV1(const google::protobuf::DescriptorPool* pool)
    : pool_(pool) {}

void ServerReflectionV1::SetServiceNames(std::vector<std::string> names) {
  absl::MutexLock lock(&mu_);
  service_names_ = std::move(names);
}

ServerReflectionResponse ServerReflectionV1::Answer(const ServerReflectionRequest& request) const {
  ServerReflectionResponse response;
  response.set_valid_host(request.host());
  *response.mutable_original_request() = request;
  switch (request.message_request_case()) {
    case ServerReflectionRequest::kListServices: {
      absl::MutexLock lock(&mu_);
      for (const std::string& name : service_names_) {
        response.mutable_list_services_response()->add_service()->set_name(name);
      }
      break;
    }
    case ServerReflectionRequest::kFileByFilename:
      SetFile(response, pool_->FindFileByName(request.file_by_filename()),
              absl::StrCat("file \"", request.file_by_filename(), "\""));
      break;
    case ServerReflectionRequest::kFileContainingSymbol:
      SetFile(response, pool_->FindFileContainingSymbol(request.file_containing_symbol()),
              absl::StrCat("symbol \"", request.file_containing_symbol(), "\""));
      break;
    case ServerReflectionRequest::kFileContainingExtension: {
      const auto& extension = request.file_containing_extension();
      const google::protobuf::Descriptor* type =
          pool_->FindMessageTypeByName(extension.containing_type());
      const google::protobuf::FieldDescriptor* field =
          type == nullptr ? nullptr
                          : pool_->FindExtensionByNumber(type, extension.extension_number());
      SetFile(response, field == nullptr ? nullptr : field->file(),
              absl::StrCat("extension ", extension.extension_number(), " of \"",
                           extension.containing_type(), "\""));
      break;
    }
    case ServerReflectionRequest::kAllExtensionNumbersOfType: {
      const google::protobuf::Descriptor* type =
          pool_->FindMessageTypeByName(request.all_extension_numbers_of_type());
      if (type == nullptr) {
        SetError(response, grpc::StatusCode::NOT_FOUND,
                 absl::StrCat("type \"", request.all_extension_numbers_of_type(), "\" not found"));
        break;
      }
      std::vector<const google::protobuf::FieldDescriptor*> extensions;
      pool_->FindAllExtensions(type, &extensions);
      auto* numbers = response.mutable_all_extension_numbers_response();
      numbers->set_base_type_name(type->full_name());
      for (const auto* field : extensions) numbers->add_extension_number(field->number());
      break;
    }
    case ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
      SetError(response, grpc::StatusCode::INVALID_ARGUMENT,
               "ServerReflectionRequest.message_request is not set");
      break;
  }
  return response;
}

namespace {

// One ServerReflectionInfo stream: read a request, write its answer, read
// the next; it ends when the client half-closes or goes away. Reads and
// writes alternate, so only one callback runs at a time.
class ReflectionStream final
    : public grpc::ServerBidiReactor<ServerReflectionRequest, ServerReflectionResponse> {
 public:
  explicit ReflectionStream(const ServerReflectionV1* service) : service_(service) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    response_ = service_->Answer(request_);
    StartWrite(&response_);
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  const ServerReflectionV1* const service_;  // outlives the server
  ServerReflectionRequest request_;
  ServerReflectionResponse response_;
};

}  // namespace

grpc::ServerBidiReactor<ServerReflectionRequest, ServerReflectionResponse>*
ServerReflectionV1::ServerReflectionInfo(grpc::CallbackServerContext* /*context*/) {
  return new ReflectionStream(this);
}

void AddServerReflectionV1(grpc::ServerBuilder& builder) {
  builder.SetOption(std::make_unique<ReflectionV1Option>());
}

}  // namespace ordo::rpc
