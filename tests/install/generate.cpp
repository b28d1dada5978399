// The C++ API through the installed libminnow.so: greedy text for a prompt, and a
// minnow::Error caught by type.
#include <minnow/error.hpp>
#include <minnow/llm.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 4) return std::cerr << "usage: generate_cpp MODEL PROMPT N\n", 2;
  try {
    minnow::Model::load("/no/such/file.gguf");
    return 1;
  } catch (const minnow::Error&) {
  }
  auto model = minnow::Model::load(argv[1]);
  minnow::Session session(*model);
  minnow::GenerateOptions o;
  o.max_tokens = std::stoi(argv[3]);
  o.sampling.temperature = 0;
  session.generate(model->tokenize(argv[2]), o, [](std::string_view text, int32_t) {
    std::cout << text;
    return true;
  });
  std::cout << "\n";
}
