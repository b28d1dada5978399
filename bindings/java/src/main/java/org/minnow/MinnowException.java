package org.minnow;

import java.nio.charset.StandardCharsets;

/** A failed minnow call: the C status (code and name) and minnow_last_error() as the message. */
public class MinnowException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int status;
  private final String statusName;

  public MinnowException(int status, String statusName, String message) {
    super(message);
    this.status = status;
    this.statusName = statusName;
  }

  /** Called from native code: the strings arrive as UTF-8 (paths in messages may be any text). */
  MinnowException(int status, byte[] statusName, byte[] message) {
    this(status, new String(statusName, StandardCharsets.UTF_8), new String(message, StandardCharsets.UTF_8));
  }

  /** The minnow_status value (1 = MINNOW_ERR_INVALID_ARGUMENT ... 8 = MINNOW_ERR_INTERNAL). */
  public int status() {
    return status;
  }

  /** Its constant name, e.g. "MINNOW_ERR_LOAD". */
  public String statusName() {
    return statusName;
  }

  @Override
  public String toString() {
    return "MinnowException[" + statusName + "]: " + getMessage();
  }
}
