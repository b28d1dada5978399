package org.minnow;

import java.util.Objects;

/** One turn of a conversation for {@link Model#applyChatTemplate}. */
public final class ChatMessage {
  public final String role;    // "system", "user", "assistant", "tool"
  public final String content;

  public ChatMessage(String role, String content) {
    this.role = Objects.requireNonNull(role, "role");
    this.content = Objects.requireNonNull(content, "content");
  }

  public static ChatMessage system(String content) { return new ChatMessage("system", content); }
  public static ChatMessage user(String content) { return new ChatMessage("user", content); }
  public static ChatMessage assistant(String content) { return new ChatMessage("assistant", content); }

  @Override
  public String toString() {
    return role + ": " + content;
  }
}
