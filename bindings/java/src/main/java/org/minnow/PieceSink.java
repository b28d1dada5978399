package org.minnow;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What native generate() calls for each piece: decodes it, collects the text and tokens
 * of the result, and forwards to the user's callback. A throwing callback is not called
 * again; its exception is kept and rethrown by Session once native code has returned.
 */
final class PieceSink {
  private final TokenCallback callback;
  private final Session owner;
  private final StringBuilder text = new StringBuilder();
  private int[] tokens = new int[16];
  private int nTokens;
  private boolean active = true;
  private Throwable error;

  PieceSink(TokenCallback callback, Session owner) {
    this.callback = callback;
    this.owner = owner;
  }

  /** Called from native code only (minnow_jni.c looks it up by name and signature). */
  boolean piece(byte[] utf8, int token) {
    String piece = new String(utf8, StandardCharsets.UTF_8);
    text.append(piece);
    if (token >= 0) {
      if (nTokens == tokens.length) tokens = Arrays.copyOf(tokens, nTokens * 2);
      tokens[nTokens++] = token;
    }
    if (owner.closing) active = false;
    if (!active || callback == null) return active;
    try {
      active = callback.onToken(piece, token);
    } catch (Throwable t) {
      error = t;
      active = false;
    }
    return active;
  }

  String text() {
    return text.toString();
  }

  int[] tokens() {
    return Arrays.copyOf(tokens, nTokens);
  }

  /** Rethrows what the callback threw (unchecked as it was; checked ones wrapped). */
  void rethrow() {
    if (error == null) return;
    if (error instanceof RuntimeException) throw (RuntimeException) error;
    if (error instanceof Error) throw (Error) error;
    throw new RuntimeException("the token callback threw", error);
  }
}
