package org.minnow;

/**
 * The JNI entry points (bindings/java/jni/minnow_jni.c). Text crosses as UTF-8 byte
 * arrays in both directions: JNI's own string functions use modified UTF-8, which
 * mangles characters outside the BMP such as emoji. Callers check handles first.
 */
final class Native {
  private Native() {}

  static {
    // -Dminnow.library=/abs/path/libminnow_jni.so for a library outside java.library.path.
    String path = System.getProperty("minnow.library");
    if (path != null && !path.isEmpty()) System.load(path);
    else System.loadLibrary("minnow_jni");
  }

  /** Forces the static initializer (loads the library) from other classes. */
  static void load() {}

  static native int abiVersion();
  static native byte[] version();

  /** ints: n_threads, n_ctx, kv_type, int8_activations (0/1), backend, device, gpu_layers. */
  static native void modelParamsDefault(int[] out);
  static native long modelLoad(byte[] path, int nThreads, int nCtx, int kvType, boolean int8Activations, int backend,
                               int device, int gpuLayers);
  static native void modelFree(long model);
  /** longs: see Model.info(); strings: architecture, name. */
  static native void modelInfo(long model, long[] nums, byte[][] strings);

  static native int[] tokenize(long model, byte[] text, boolean parseSpecial);
  static native byte[] detokenize(long model, int[] tokens, boolean renderSpecial);
  static native boolean isEndOfGeneration(long model, int token);
  static native byte[] chatApply(long model, byte[][] roles, byte[][] contents, boolean addGenerationPrompt);
  static native byte[] chatApplyJson(long model, byte[] variablesJson);

  static native long sessionCreate(long model, int nThreads, int nCtx, int nBatch);
  static native void sessionFree(long session);
  static native void sessionSetDraft(long session, long draft, int draftMax, float draftPMin);
  static native void sessionReset(long session);
  static native int sessionNPast(long session);
  static native int sessionNCtx(long session);
  static native void sessionCancel(long session);
  static native float[] sessionEval(long session, int[] tokens, int vocabSize);

  /** floats: temperature, top_p, min_p, repeat_penalty, presence, frequency;
   *  longs: max_tokens, top_k, repeat_last_n, seed, stop_at_end_of_generation, parse_special. */
  static native void generateParamsDefault(float[] floats, long[] longs);
  /**
   * Generates from prompt (text) or, when it is null, from promptTokens. Pieces go to
   * sink.piece(byte[], int); result gets n_prompt, n_reused, n_generated, stop_reason,
   * prompt_seconds, generate_seconds.
   */
  static native void generate(long session, byte[] prompt, int[] promptTokens, float[] floats, long[] longs,
                              byte[][] stops, PieceSink sink, double[] result);

  /** precision: minnow_embed_precision (0 bf16, 1 f32, 2 q8_0). */
  static native long embedderLoad(byte[] path, int nThreads, int precision);
  static native void embedderFree(long embedder);
  static native int embedderDim(long embedder);
  /** UTF-8 texts -> texts.length * dim floats, text after text. */
  static native float[] embed(long embedder, byte[][] texts);
}
