package org.minnow;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Sampling and stopping for {@link Session#generate}; starts from the C defaults
 * (minnow_generate_params_default: 256 tokens, temperature 0.8, top-k 40, top-p 0.95,
 * min-p 0.05, no penalties). Setters chain: {@code new GenerateOptions().maxTokens(64).temperature(0)}.
 */
public final class GenerateOptions {
  // Laid out as Native.generate takes them.
  private static final float[] DEFAULT_FLOATS = new float[6];
  private static final long[] DEFAULT_LONGS = new long[7];

  static {
    Native.generateParamsDefault(DEFAULT_FLOATS, DEFAULT_LONGS);
  }

  final float[] floats = DEFAULT_FLOATS.clone();  // temperature, top_p, min_p, repeat, presence, frequency
  // max_tokens, top_k, repeat_last_n, seed, stop_at_eog, parse_special, lookup_draft
  final long[] longs = DEFAULT_LONGS.clone();
  private final List<String> stop = new ArrayList<>();

  public GenerateOptions maxTokens(int n) { longs[0] = n; return this; }
  /** 0 (or less): greedy. */
  public GenerateOptions temperature(float t) { floats[0] = t; return this; }
  /** 0: off. */
  public GenerateOptions topK(int k) { longs[1] = k; return this; }
  /** 1: off. */
  public GenerateOptions topP(float p) { floats[1] = p; return this; }
  /** 0: off. */
  public GenerateOptions minP(float p) { floats[2] = p; return this; }
  /** 1: off. */
  public GenerateOptions repeatPenalty(float p) { floats[3] = p; return this; }
  public GenerateOptions repeatLastN(int n) { longs[2] = n; return this; }
  public GenerateOptions presencePenalty(float p) { floats[4] = p; return this; }
  public GenerateOptions frequencyPenalty(float p) { floats[5] = p; return this; }
  /** Same seed + same inputs = same output. */
  public GenerateOptions seed(long seed) { longs[3] = seed; return this; }
  /** Default true: stop on EOS / end-of-turn tokens. */
  public GenerateOptions stopAtEndOfGeneration(boolean on) { longs[4] = on ? 1 : 0; return this; }
  /** Default true: control-token text in a text prompt becomes that token. */
  public GenerateOptions parseSpecial(boolean on) { longs[5] = on ? 1 : 0; return this; }
  /**
   * Speculative decoding by prompt lookup: up to n (0..64) proposed tokens copied from the
   * context checked per pass; the output is unchanged. Default 0: off.
   */
  public GenerateOptions lookupDraft(int n) { longs[6] = n; return this; }

  /** Replaces the stop strings: generation ends before the first of them appears (it is not streamed). */
  public GenerateOptions stop(String... strings) {
    stop.clear();
    if (strings != null) for (String s : strings) addStop(s);
    return this;
  }

  public GenerateOptions addStop(String s) {
    if (s == null) throw new NullPointerException("stop string is null");
    if (s.isEmpty()) throw new IllegalArgumentException("stop string is empty");
    stop.add(s);
    return this;
  }

  public int maxTokens() { return (int) longs[0]; }
  public float temperature() { return floats[0]; }
  public int topK() { return (int) longs[1]; }
  public float topP() { return floats[1]; }
  public float minP() { return floats[2]; }
  public float repeatPenalty() { return floats[3]; }
  public long seed() { return longs[3]; }
  public int lookupDraft() { return (int) longs[6]; }
  public List<String> stop() { return Collections.unmodifiableList(stop); }

  byte[][] stopBytes() {
    return Utf8.cStrings(stop, "stop");
  }

  @Override
  public String toString() {
    return "GenerateOptions{floats=" + Arrays.toString(floats) + ", longs=" + Arrays.toString(longs) + ", stop=" + stop
        + "}";
  }
}
