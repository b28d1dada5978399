package org.minnow;

/** What one {@link Session#generate} did (minnow_generate_result), with the text it streamed. */
public final class GenerateResult {
  public enum StopReason {
    END_OF_GENERATION,  // EOS / end-of-turn token
    MAX_TOKENS,
    STOP_STRING,        // one of GenerateOptions.stop
    CANCELLED,          // the callback returned false (or threw) or Session.cancel()
    CONTEXT_FULL
  }

  public final int nPrompt;     // prompt tokens evaluated (after the reused cached prefix)
  public final int nReused;     // prompt tokens whose KV was already cached
  public final int nGenerated;
  public final StopReason stopReason;
  public final double promptSeconds, generateSeconds;
  /** Everything streamed, callback or not (the stop string excluded). */
  public final String text;
  /** The ids of the streamed pieces (not those of a stop string or a final end-of-generation token). */
  public final int[] tokens;

  GenerateResult(double[] r, String text, int[] tokens) {
    nPrompt = (int) r[0];
    nReused = (int) r[1];
    nGenerated = (int) r[2];
    int reason = (int) r[3];
    StopReason[] all = StopReason.values();
    stopReason = reason >= 0 && reason < all.length ? all[reason] : StopReason.CANCELLED;
    promptSeconds = r[4];
    generateSeconds = r[5];
    this.text = text;
    this.tokens = tokens;
  }

  @Override
  public String toString() {
    return "GenerateResult{" + stopReason + ", prompt " + nPrompt + " (+" + nReused + " reused), generated "
        + nGenerated + "}";
  }
}
