// The gate's activation: GELU (tanh approximation) or SiLU.
float activation(float x, bool gelu) {
  if (gelu) {
    // tanh's argument clamped: some drivers compute tanh through exp, which overflows.
    const float t = clamp(0.7978845608 * (x + 0.044715 * x * x * x), -15.0, 15.0);
    return 0.5 * x * (1.0 + tanh(t));
  }
  return x / (1.0 + exp(-x));
}
