package org.minnow;

/** A model's hyper-parameters and vocabulary facts (minnow_model_info). */
public final class ModelInfo {
  public final String architecture;  // "llama", "qwen2", "qwen3", "gemma3"
  public final String name;          // general.name, may be ""
  public final int nLayers, dModel, nHeads, nKvHeads, dFf, vocabSize, contextLength;
  public final long nParams, weightBytes;
  public final int bosId, eosId;     // -1 when the model has none
  public final boolean hasChatTemplate;

  ModelInfo(long[] n, byte[][] s) {
    architecture = Utf8.string(s[0]);
    name = Utf8.string(s[1]);
    nLayers = (int) n[0];
    dModel = (int) n[1];
    nHeads = (int) n[2];
    nKvHeads = (int) n[3];
    dFf = (int) n[4];
    vocabSize = (int) n[5];
    contextLength = (int) n[6];
    nParams = n[7];
    weightBytes = n[8];
    bosId = (int) n[9];
    eosId = (int) n[10];
    hasChatTemplate = n[11] != 0;
  }

  static final int N_LONGS = 12;

  @Override
  public String toString() {
    return architecture + " '" + name + "': " + nLayers + " layers, d_model " + dModel + ", vocab " + vocabSize
        + ", " + nParams + " params";
  }
}
