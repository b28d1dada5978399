package org.minnow;

/**
 * A sentence-embedding model (a BERT-family sentence-transformers directory such as
 * all-MiniLM-L6-v2): texts to fixed-size vectors, unit length when the model normalizes
 * them (then cosine similarity is the dot product). Thread-safe: calls run one at a time
 * (each uses all the embedder's threads); close() waits for the one in progress.
 *
 * <pre>
 * try (Embedder e = Embedder.load("models/all-MiniLM-L6-v2", null)) {
 *   float[][] v = e.embed("A cat sits on the mat.", "A kitten is on a rug.");
 * }
 * </pre>
 */
public final class Embedder implements AutoCloseable {
  /** How the encoder multiplies its matrices (minnow_embed_precision; docs/embeddings.md). */
  public enum Precision {
    /** The default: bf16 products summed in f32, cosine ~0.99999 to F32. */
    BF16(0),
    /** Exact. */
    F32(1),
    /** 8-bit weights: coarser. */
    Q8_0(2);
    final int code;
    Precision(int code) { this.code = code; }
  }

  private long handle;  // guarded by this; 0 once closed
  private final int dim;

  private Embedder(long handle) {
    this.handle = handle;
    this.dim = Native.embedderDim(handle);
  }

  /** Loads a model directory; threads 0: one per core; precision null: BF16. */
  public static Embedder load(String dir, int threads, Precision precision) {
    byte[] p = Utf8.cString(dir, "dir");
    return new Embedder(Native.embedderLoad(p, threads, (precision == null ? Precision.BF16 : precision).code));
  }

  public static Embedder load(String dir, Precision precision) {
    return load(dir, 0, precision);
  }

  /** Floats per embedding. */
  public int dim() {
    return dim;
  }

  /** One embedding per text, in order. */
  public synchronized float[][] embed(String... texts) {
    if (texts == null) throw new NullPointerException("texts is null");
    if (handle == 0) throw new IllegalStateException("the embedder is closed");
    byte[][] b = new byte[texts.length][];
    for (int i = 0; i < texts.length; i++) b[i] = Utf8.bytes(texts[i], "text");
    float[] flat = Native.embed(handle, b);
    float[][] out = new float[texts.length][];
    for (int i = 0; i < texts.length; i++) out[i] = java.util.Arrays.copyOfRange(flat, i * dim, (i + 1) * dim);
    return out;
  }

  @Override
  public synchronized void close() {
    if (handle != 0) Native.embedderFree(handle);
    handle = 0;
  }
}
