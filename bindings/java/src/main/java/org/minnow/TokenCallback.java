package org.minnow;

/**
 * Receives generated text as it streams. piece is whole characters (possibly empty while
 * a multi-byte character or a possible stop string is held back); token is its id, or -1
 * for held-back text released at the end. Return false to stop; an exception thrown here
 * stops generation too and is rethrown by {@link Session#generate}. Once it has returned
 * false or thrown, it is not called again for that generation.
 */
@FunctionalInterface
public interface TokenCallback {
  boolean onToken(String piece, int token);
}
