package org.minnow;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Java strings to the UTF-8 bytes the C API takes. */
final class Utf8 {
  private Utf8() {}

  /** For C strings without a length: null or an embedded NUL is the caller's error. */
  static byte[] cString(String s, String what) {
    if (s == null) throw new NullPointerException(what + " is null");
    if (s.indexOf('\0') >= 0) throw new IllegalArgumentException(what + " contains a NUL character");
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] bytes(String s, String what) {
    if (s == null) throw new NullPointerException(what + " is null");
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[][] cStrings(List<String> list, String what) {
    byte[][] out = new byte[list.size()][];
    for (int i = 0; i < out.length; i++) out[i] = cString(list.get(i), what + "[" + i + "]");
    return out;
  }

  static String string(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
