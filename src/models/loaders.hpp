// The two model loaders behind load_model(). Both fill a LoadedModel through a
// FamilySpec and a TensorTable; they differ in where hyper-parameters and names come from.
#pragma once
#include <memory>
#include <string>

#include "models/family.hpp"
#include "models/model.hpp"

namespace minnow {

std::unique_ptr<LoadedModel> load_gguf_model(const std::string& path);
std::unique_ptr<LoadedModel> load_hf_checkpoint(const std::string& dir);

// Checks the config against itself (and the tensors' presence is checked at binding);
// throws Error naming the first inconsistency.
void validate_config(const ModelConfig& c);

}  // namespace minnow
