#include "core/onnx/function_inlining.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/util/status_macros.h"
#include "google/protobuf/unknown_field_set.h"

namespace ordo {
namespace {

using FunctionKey = std::pair<std::string, std::string>;  // domain, name

// Calls within calls, deepest: a module tree is far shallower, and the
// expansion recurses once per level (a chain of thousands would overflow
// the stack).
constexpr size_t kMaxNesting = 64;

bool Inlined(absl::string_view domain) { return domain != kOrdoFusionDomain; }

// "" and "ai.onnx" are the one standard domain.
std::string OpsetDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

std::string FunctionName(const onnx::FunctionProto& function) {
  return function.domain().empty() ? function.name()
                                   : absl::StrCat(function.domain(), ".", function.name());
}

// FunctionProto.attribute_proto (11): attributes with default values, newer
// than the linked ONNX, so kept by protobuf as unknown fields.
absl::flat_hash_map<std::string, onnx::AttributeProto> DefaultAttributes(
    const onnx::FunctionProto& function) {
  absl::flat_hash_map<std::string, onnx::AttributeProto> defaults;
  const google::protobuf::UnknownFieldSet& unknown = function.unknown_fields();
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != 11 ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    onnx::AttributeProto attribute;
    if (attribute.ParseFromString(field.length_delimited())) {
      defaults[attribute.name()] = std::move(attribute);
    }
  }
  return defaults;
}

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, int64_t max_nodes) : model_(model), max_nodes_(max_nodes) {
    for (const onnx::FunctionProto& function : model.functions()) {
      if (Inlined(function.domain())) functions_[{function.domain(), function.name()}] = &function;
    }
    for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
      opsets_.emplace(OpsetDomain(opset.domain()), opset.version());
    }
    const onnx::GraphProto& graph = model.graph();
    for (const onnx::ValueInfoProto& v : graph.input()) taken_.insert(v.name());
    for (const onnx::TensorProto& t : graph.initializer()) taken_.insert(t.name());
    for (const onnx::NodeProto& node : graph.node()) {
      taken_.insert(node.name());
      for (const std::string& name : node.output()) taken_.insert(name);
    }
  }

  absl::Status Run() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> original;
    original.Swap(model_.mutable_graph()->mutable_node());
    for (onnx::NodeProto& node : original) {
      const onnx::FunctionProto* function = Called(node);
      if (function == nullptr) {
        ORDO_RETURN_IF_ERROR(Emit(std::move(node)));
        continue;
      }
      std::vector<FunctionKey> stack;
      ORDO_RETURN_IF_ERROR(
          Expand(node, node.name().empty() ? node.op_type() : node.name(), *function, stack));
    }
    RemoveInlinedFunctions();
    return absl::OkStatus();
  }

 private:
  const onnx::FunctionProto* Called(const onnx::NodeProto& node) const {
    auto it = functions_.find(FunctionKey{node.domain(), node.op_type()});
    return it == functions_.end() ? nullptr : it->second;
  }

  absl::Status Emit(onnx::NodeProto node) {
    if (model_.graph().node_size() >= max_nodes_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("inlining the model's local functions gives more than ", max_nodes_,
                       " nodes; the limit is ", max_nodes_, " ops"));
    }
    *model_.mutable_graph()->add_node() = std::move(node);
    return absl::OkStatus();
  }

  // `base`, or `base_1`, `base_2`, ...: the first not yet in the graph.
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int n = 1; !taken_.insert(name).second; ++n) name = absl::StrCat(base, "_", n);
    return name;
  }

  absl::Status CheckOpsets(const onnx::FunctionProto& function) {
    for (const onnx::OperatorSetIdProto& opset : function.opset_import()) {
      const std::string domain = OpsetDomain(opset.domain());
      auto [it, added] = opsets_.emplace(domain, opset.version());
      if (added) {
        onnx::OperatorSetIdProto& imported = *model_.add_opset_import();
        imported.set_domain(domain);
        imported.set_version(opset.version());
      } else if (it->second != opset.version()) {
        return absl::InvalidArgumentError(
            absl::StrCat("local function \"", FunctionName(function), "\" imports opset ",
                         opset.version(), " of domain \"", domain.empty() ? "ai.onnx" : domain,
                         "\" but the model imports ", it->second,
                         "; ordo inlines local functions into the graph, which has one opset per "
                         "domain: export with one opset (or convert with onnx.version_converter)"));
      }
    }
    return absl::OkStatus();
  }

  // The call's formal-to-actual names: inputs it leaves out are absent,
  // outputs it leaves out become values of the body. An output that is
  // also an input (the function passes it through) goes to `passed`, as
  // (input, output) to copy with an Identity.
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> BindValues(
      const onnx::NodeProto& call, const std::string& prefix, const onnx::FunctionProto& function,
      std::vector<std::pair<std::string, std::string>>& passed) {
    if (call.input_size() > function.input_size() || call.output_size() > function.output_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node \"", prefix, "\" calls local function \"", FunctionName(function), "\" with ",
          call.input_size(), " inputs and ", call.output_size(), " outputs; it takes at most ",
          function.input_size(), " and ", function.output_size()));
    }
    absl::flat_hash_map<std::string, std::string> bound;
    for (int i = 0; i < function.input_size(); ++i) {
      bound[function.input(i)] = i < call.input_size() ? call.input(i) : "";
    }
    for (int i = 0; i < function.output_size(); ++i) {
      const bool given = i < call.output_size() && !call.output(i).empty();
      std::string actual =
          given ? call.output(i) : Fresh(absl::StrCat(prefix, "/", function.output(i)));
      auto [it, added] = bound.try_emplace(function.output(i), actual);
      if (!added) passed.emplace_back(it->second, std::move(actual));
    }
    return bound;
  }

  absl::Status Expand(const onnx::NodeProto& call, const std::string& prefix,
                      const onnx::FunctionProto& function, std::vector<FunctionKey>& stack) {
    const FunctionKey key{function.domain(), function.name()};
    if (absl::c_linear_search(stack, key)) {
      return absl::InvalidArgumentError(absl::StrCat("local function \"", FunctionName(function),
                                                     "\" calls itself (through node \"", prefix,
                                                     "\"); ONNX functions cannot recurse"));
    }
    if (stack.size() >= kMaxNesting) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node \"", prefix, "\" calls local function \"", FunctionName(function),
          "\" inside more than ", kMaxNesting, " nested calls; ordo inlines at most that deep"));
    }
    ORDO_RETURN_IF_ERROR(CheckOpsets(function));
    std::vector<std::pair<std::string, std::string>> passed;
    ORDO_ASSIGN_OR_RETURN(auto values, BindValues(call, prefix, function, passed));
    absl::flat_hash_map<std::string, const onnx::AttributeProto*> given;
    for (const onnx::AttributeProto& attribute : call.attribute()) {
      given[attribute.name()] = &attribute;
    }
    const auto defaults = DefaultAttributes(function);
    stack.push_back(key);
    for (int n = 0; n < function.node_size(); ++n) {
      onnx::NodeProto node = Instantiate(function.node(n), prefix, n, values, given, defaults);
      if (const onnx::FunctionProto* inner = Called(node)) {
        ORDO_RETURN_IF_ERROR(Expand(node, node.name(), *inner, stack));
      } else {
        ORDO_RETURN_IF_ERROR(Emit(std::move(node)));
      }
    }
    stack.pop_back();
    for (auto& [input, output] : passed) {
      onnx::NodeProto copy;
      copy.set_name(Fresh(absl::StrCat(prefix, "/Identity")));
      copy.set_op_type("Identity");
      copy.add_input(input);
      copy.add_output(output);
      ORDO_RETURN_IF_ERROR(Emit(std::move(copy)));
    }
    return absl::OkStatus();
  }

  // One body node with the call's names and attributes.
  onnx::NodeProto Instantiate(
      const onnx::NodeProto& body, const std::string& prefix, int index,
      absl::flat_hash_map<std::string, std::string>& values,
      const absl::flat_hash_map<std::string, const onnx::AttributeProto*>& given,
      const absl::flat_hash_map<std::string, onnx::AttributeProto>& defaults) {
    onnx::NodeProto node = body;
    node.set_name(Fresh(absl::StrCat(
        prefix, "/",
        body.name().empty() ? absl::StrCat(body.op_type(), "_", index) : body.name())));
    auto rename = [&](std::string& name) {
      if (name.empty()) return;
      auto [it, added] = values.try_emplace(name);
      if (added) it->second = Fresh(absl::StrCat(prefix, "/", name));
      name = it->second;
    };
    for (std::string& name : *node.mutable_input()) rename(name);
    for (std::string& name : *node.mutable_output()) rename(name);
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
    attributes.Swap(node.mutable_attribute());
    for (onnx::AttributeProto& attribute : attributes) {
      if (attribute.ref_attr_name().empty()) {
        *node.add_attribute() = std::move(attribute);
        continue;
      }
      const onnx::AttributeProto* value = nullptr;
      if (auto it = given.find(attribute.ref_attr_name()); it != given.end()) value = it->second;
      if (auto it = defaults.find(attribute.ref_attr_name());
          value == nullptr && it != defaults.end()) {
        value = &it->second;
      }
      if (value == nullptr) continue;  // unset: the op's own default
      onnx::AttributeProto& bound = *node.add_attribute();
      bound = *value;
      bound.set_name(attribute.name());
    }
    return node;
  }

  void RemoveInlinedFunctions() {
    google::protobuf::RepeatedPtrField<onnx::FunctionProto> all;
    all.Swap(model_.mutable_functions());
    for (onnx::FunctionProto& function : all) {
      if (!Inlined(function.domain())) *model_.add_functions() = std::move(function);
    }
  }

  onnx::ModelProto& model_;
  const int64_t max_nodes_;
  absl::flat_hash_map<FunctionKey, const onnx::FunctionProto*> functions_;
  absl::flat_hash_map<std::string, int64_t> opsets_;
  absl::flat_hash_set<std::string> taken_;
};

}  // namespace

std::optional<int32_t> FirstLocalFunctionCall(const onnx_import::ModelView& view) {
  if (view.functions.empty()) return std::nullopt;
  absl::flat_hash_set<std::pair<absl::string_view, absl::string_view>> local;
  for (const onnx_import::FunctionView& f : view.functions) {
    if (Inlined(f.domain)) local.emplace(f.domain, f.name);
  }
  for (int32_t n = 0; n < view.num_nodes(); ++n) {
    const onnx_import::NodeView& node = view.nodes[n];
    if (local.contains(std::make_pair(node.domain, node.op_type))) return n;
  }
  return std::nullopt;
}

namespace {

// Two functions of one domain and name differ by `overload` (IR 10, newer
// than the linked ONNX): which one a node calls is not known here.
absl::Status CheckNoOverloads(const onnx::ModelProto& model) {
  absl::flat_hash_set<FunctionKey> seen;
  for (const onnx::FunctionProto& function : model.functions()) {
    if (seen.insert({function.domain(), function.name()}).second) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "the model has two local functions \"", FunctionName(function),
        "\" (overloads, ONNX IR 10), which ordo cannot tell apart; export with IR 9 or earlier"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InlineLocalFunctions(onnx::ModelProto& model, int64_t max_nodes) {
  if (model.functions_size() == 0) return absl::OkStatus();
  ORDO_RETURN_IF_ERROR(CheckNoOverloads(model));
  return Inliner(model, max_nodes).Run();
}

}  // namespace ordo
