package org.minnow;

/**
 * One conversation: a KV cache over a {@link Model}. Used by one thread at a time (calls
 * are serialized), except {@link #cancel()}, which any thread may call. close() from another
 * thread cancels a running generation and waits for it; from the callback it frees the
 * session once generate() returns.
 */
public final class Session implements AutoCloseable {
  /** Zero fields take the model's defaults. */
  public static final class Options {
    private int threads, contextSize, batchSize;

    public Options threads(int n) { threads = n; return this; }
    public Options contextSize(int n) { contextSize = n; return this; }
    /** Most prompt tokens per forward pass; 0: 256. */
    public Options batchSize(int n) { batchSize = n; return this; }
  }

  private final Model model;
  private final int vocabSize;
  private final Object handleLock = new Object();  // lets cancel() never see a freed handle
  private volatile long handle;
  volatile boolean closing;  // stops a generation that had not started when close() cancelled
  private boolean generating, closeAfterGenerate;  // guarded by this

  public Session(Model model, Options options) {
    if (model == null) throw new NullPointerException("model is null");
    Options o = options != null ? options : new Options();
    long m = model.acquire();  // held until close(): C sessions must be freed before their model
    try {
      vocabSize = model.info().vocabSize;
      handle = Native.sessionCreate(m, o.threads, o.contextSize, o.batchSize);
    } catch (RuntimeException | Error e) {
      model.release();
      throw e;
    }
    this.model = model;
  }

  public Session(Model model) {
    this(model, null);
  }

  public Model model() {
    return model;
  }

  /**
   * Generates from prompt, streaming to callback (may be null). The prompt is the whole
   * conversation so far: the part the cache already holds is reused, so a chat re-renders
   * every turn and pays only for the new text. options may be null (defaults).
   */
  public GenerateResult generate(String prompt, GenerateOptions options, TokenCallback callback) {
    return run(Utf8.cString(prompt, "prompt"), null, options, callback);
  }

  /** The same from token ids. */
  public GenerateResult generate(int[] promptTokens, GenerateOptions options, TokenCallback callback) {
    if (promptTokens == null) throw new NullPointerException("promptTokens is null");
    return run(null, promptTokens.clone(), options, callback);
  }

  private synchronized GenerateResult run(byte[] prompt, int[] tokens, GenerateOptions options, TokenCallback callback) {
    long h = live();
    GenerateOptions o = options != null ? options : new GenerateOptions();
    byte[][] stops = o.stopBytes();
    PieceSink sink = new PieceSink(callback, this);
    double[] r = new double[6];
    generating = true;
    try {
      Native.generate(h, prompt, tokens, o.floats, o.longs, stops, sink, r);
    } finally {
      generating = false;
      if (closeAfterGenerate) free();
    }
    sink.rethrow();
    return new GenerateResult(r, sink.text(), sink.tokens());
  }

  /** Asks a running generate() to stop after its current token. Any thread; a no-op once closed. */
  public void cancel() {
    synchronized (handleLock) {
      if (handle != 0) Native.sessionCancel(handle);
    }
  }

  /**
   * Speculative decoding with a draft model: draft, a smaller model with the same vocabulary
   * (Qwen2.5-Coder-0.5B for -1.5B), proposes up to draftMax (1..16) tokens per step, stopping at
   * one it gives less than draftPMin (0..1; 0.5 suits most pairs), and this session's model
   * checks them in one pass: the same output, sooner where the draft guesses well. The draft
   * gets a KV cache of its own and stays usable after draft is closed. With
   * {@link GenerateOptions#lookupDraft} too, prompt lookup proposes first. null: off.
   * A draft of another vocabulary throws MinnowException.
   */
  public synchronized void setDraft(Model draft, int draftMax, float draftPMin) {
    long h = live();
    if (draft == null) {
      Native.sessionSetDraft(h, 0, 0, 0);
      return;
    }
    long d = draft.acquire();
    try {
      Native.sessionSetDraft(h, d, draftMax, draftPMin);
    } finally {
      draft.release();
    }
  }

  /** Forgets the conversation: the next generation starts from an empty cache. */
  public synchronized void reset() {
    Native.sessionReset(live());
  }

  /**
   * Makes the session have seen exactly tokens (reusing the cached prefix) and returns the
   * logits after the last one (vocabSize floats).
   */
  public synchronized float[] logits(int[] tokens) {
    if (tokens == null) throw new NullPointerException("tokens is null");
    return Native.sessionEval(live(), tokens, vocabSize);
  }

  /** Tokens in the cache. */
  public synchronized int nPast() {
    return Native.sessionNPast(live());
  }

  /** The context size in tokens. */
  public synchronized int contextSize() {
    return Native.sessionNCtx(live());
  }

  /** Idempotent. */
  @Override
  public void close() {
    closing = true;
    cancel();  // lets a generation on another thread end before we take the lock
    synchronized (this) {
      if (generating) closeAfterGenerate = true;  // called from the callback
      else free();
    }
  }

  private long live() {
    long h = handle;
    if (h == 0) throw new IllegalStateException("the session is closed");
    if (generating) throw new IllegalStateException("the session is busy: called from its own token callback");
    return h;
  }

  private void free() {
    long h;
    synchronized (handleLock) {
      h = handle;
      handle = 0;
    }
    if (h == 0) return;
    Native.sessionFree(h);
    model.release();
  }
}
