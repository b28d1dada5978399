package org.minnow;

import java.util.Arrays;
import java.util.List;

/**
 * A loaded model (weights, tokenizer, chat template). Thread-safe: any number of threads
 * and {@link Session}s may use one model. close() frees it once the calls in progress
 * and the sessions opened on it have finished, so closing in any order is safe.
 */
public final class Model implements AutoCloseable {
  /** KV-cache storage of the sessions (minnow_kv_type). */
  public enum KvType {
    F16(0), F32(1), Q8_0(2);
    final int code;
    KvType(int code) { this.code = code; }
    static KvType of(int code) {
      for (KvType t : values()) if (t.code == code) return t;
      return F16;
    }
  }

  /** Where the sessions run (minnow_backend). */
  public enum Backend {
    /** The CPU (the default). */
    CPU(0),
    /** A GPU through Vulkan: the whole model and an f16 KV cache in its memory (docs/vulkan.md). */
    VULKAN(1);
    final int code;
    Backend(int code) { this.code = code; }
    static Backend of(int code) { return code == 1 ? VULKAN : CPU; }
  }

  /** Load options; start from the C defaults (minnow_model_params_default). */
  public static final class Options {
    private int threads, contextSize, device, gpuLayers;
    private KvType kvType;
    private boolean int8Activations;
    private Backend backend;

    public Options() {
      int[] d = new int[7];
      Native.modelParamsDefault(d);
      threads = d[0];
      contextSize = d[1];
      kvType = KvType.of(d[2]);
      int8Activations = d[3] != 0;
      backend = Backend.of(d[4]);
      device = d[5];
      gpuLayers = d[6];
    }

    /** Threads per session; 0: one per (big) core. */
    public Options threads(int n) { threads = n; return this; }
    /** KV-cache capacity in tokens; 0: 4096, capped by the model's trained context. */
    public Options contextSize(int n) { contextSize = n; return this; }
    public Options kvType(KvType t) { kvType = t == null ? KvType.F16 : t; return this; }
    /** int8 activations in quantized matmuls: faster, logits move by ~0.05. */
    public Options int8Activations(boolean on) { int8Activations = on; return this; }
    public Options backend(Backend b) { backend = b == null ? Backend.CPU : b; return this; }
    /** The Vulkan device's index, as `minnow devices` numbers them. */
    public Options device(int n) { device = n; return this; }
    /** With the Vulkan backend: the last n layers (and the output head) on the device, the rest on the CPU; -1: all. */
    public Options gpuLayers(int n) { gpuLayers = n; return this; }
  }

  private long handle;  // guarded by this; 0 once freed
  private boolean closed;
  private int users;    // calls in progress + open sessions
  private final ModelInfo info;

  private Model(long handle) {
    this.handle = handle;
    long[] n = new long[ModelInfo.N_LONGS];
    byte[][] s = new byte[2][];
    try {
      Native.modelInfo(handle, n, s);
    } catch (RuntimeException e) {
      Native.modelFree(handle);
      throw e;
    }
    info = new ModelInfo(n, s);
  }

  /** Loads a GGUF file or a Hugging Face checkpoint directory; options may be null. */
  public static Model load(String path, Options options) {
    byte[] p = Utf8.cString(path, "path");
    Options o = options != null ? options : new Options();
    return new Model(Native.modelLoad(p, o.threads, o.contextSize, o.kvType.code, o.int8Activations, o.backend.code,
                                      o.device, o.gpuLayers));
  }

  public static Model load(String path) {
    return load(path, null);
  }

  /** The library's version ("0.1.0"). */
  public static String libraryVersion() {
    return Utf8.string(Native.version());
  }

  public ModelInfo info() {
    checkOpen();
    return info;
  }

  /** Text to token ids; control-token text such as "<|im_start|>" becomes that token. */
  public int[] tokenize(String text) {
    return tokenize(text, true);
  }

  public int[] tokenize(String text, boolean parseSpecial) {
    byte[] b = Utf8.bytes(text, "text");
    long h = acquire();
    try {
      return Native.tokenize(h, b, parseSpecial);
    } finally {
      release();
    }
  }

  /** Token ids to text; bytes that are not valid UTF-8 (a cut character) become U+FFFD. */
  public String detokenize(int[] tokens) {
    return Utf8.string(detokenizeBytes(tokens, false));
  }

  public String detokenize(int[] tokens, boolean renderSpecial) {
    return Utf8.string(detokenizeBytes(tokens, renderSpecial));
  }

  /** The exact bytes the tokenizer decodes (for tokens that split a character). */
  public byte[] detokenizeBytes(int[] tokens, boolean renderSpecial) {
    if (tokens == null) throw new NullPointerException("tokens is null");
    long h = acquire();
    try {
      return Native.detokenize(h, tokens, renderSpecial);
    } finally {
      release();
    }
  }

  /** True for EOS and end-of-turn tokens. */
  public boolean isEndOfGeneration(int token) {
    long h = acquire();
    try {
      return Native.isEndOfGeneration(h, token);
    } finally {
      release();
    }
  }

  /** Renders the model's own chat template; with addGenerationPrompt it ends with the assistant's header. */
  public String applyChatTemplate(List<ChatMessage> messages, boolean addGenerationPrompt) {
    if (messages == null) throw new NullPointerException("messages is null");
    byte[][] roles = new byte[messages.size()][], contents = new byte[messages.size()][];
    for (int i = 0; i < roles.length; i++) {
      ChatMessage m = messages.get(i);
      if (m == null) throw new NullPointerException("messages[" + i + "] is null");
      roles[i] = Utf8.cString(m.role, "messages[" + i + "].role");
      contents[i] = Utf8.cString(m.content, "messages[" + i + "].content");
    }
    long h = acquire();
    try {
      return Utf8.string(Native.chatApply(h, roles, contents, addGenerationPrompt));
    } finally {
      release();
    }
  }

  public String applyChatTemplate(boolean addGenerationPrompt, ChatMessage... messages) {
    if (messages == null) throw new NullPointerException("messages is null");
    return applyChatTemplate(Arrays.asList(messages), addGenerationPrompt);
  }

  /**
   * The same with every template variable in one JSON object, as an OpenAI request
   * carries them: {"messages": [...], "tools": [...], "add_generation_prompt": true}.
   */
  public String applyChatTemplateJson(String variablesJson) {
    byte[] b = Utf8.cString(variablesJson, "variablesJson");
    long h = acquire();
    try {
      return Utf8.string(Native.chatApplyJson(h, b));
    } finally {
      release();
    }
  }

  public Session newSession() {
    return new Session(this, null);
  }

  public Session newSession(Session.Options options) {
    return new Session(this, options);
  }

  /** Idempotent. Sessions still open keep working until they are closed. */
  @Override
  public void close() {
    long h;
    synchronized (this) {
      closed = true;
      if (users > 0 || handle == 0) return;
      h = handle;
      handle = 0;
    }
    Native.modelFree(h);
  }

  private synchronized void checkOpen() {
    if (closed) throw new IllegalStateException("the model is closed");
  }

  /** The handle, held until release(): by a call in progress or an open session. */
  synchronized long acquire() {
    checkOpen();
    users++;
    return handle;
  }

  void release() {
    long h;
    synchronized (this) {
      if (--users > 0 || !closed || handle == 0) return;
      h = handle;
      handle = 0;
    }
    Native.modelFree(h);
  }
}
