// A terminal chat over the Java binding: one line in, one streamed reply out.
//   java -cp build/java/bindings/java/minnow.jar:. -Djava.library.path=build/java/bindings/java \
//        Chat [MODEL] [--temp T] [-n MAX_TOKENS]
// Works with piped stdin; /reset starts over, end of input exits.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.minnow.ChatMessage;
import org.minnow.GenerateOptions;
import org.minnow.GenerateResult;
import org.minnow.MinnowException;
import org.minnow.Model;
import org.minnow.Session;

public final class Chat {
  public static void main(String[] args) throws Exception {
    String path = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    GenerateOptions options = new GenerateOptions().maxTokens(512).temperature(0.7f).seed(System.nanoTime());
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--temp") && i + 1 < args.length) options.temperature(Float.parseFloat(args[++i]));
      else if (args[i].equals("-n") && i + 1 < args.length) options.maxTokens(Integer.parseInt(args[++i]));
      else path = args[i];
    }
    // Pieces are whole UTF-8 characters: print them as UTF-8 whatever the platform default.
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Model model = Model.load(path, null); Session session = model.newSession()) {
      System.err.println("minnow chat: " + model.info() + ". /reset starts over, end of input exits.");
      List<ChatMessage> messages = new ArrayList<>();
      for (;;) {
        out.print("> ");
        out.flush();
        String line = in.readLine();
        if (line == null) break;
        if (line.trim().isEmpty()) continue;
        if (line.equals("/reset")) {
          messages.clear();
          session.reset();
          continue;
        }
        messages.add(ChatMessage.user(line));
        // The whole conversation each turn: the session reuses the cached prefix.
        String prompt = model.applyChatTemplate(messages, true);
        GenerateResult r;
        try {
          r = session.generate(prompt, options, (piece, token) -> {
            out.print(piece);
            out.flush();
            return true;
          });
        } catch (MinnowException e) {  // e.g. the conversation outgrew the context
          System.err.println("minnow: " + e.getMessage() + " (/reset starts over)");
          messages.remove(messages.size() - 1);
          continue;
        }
        out.println();
        if (r.stopReason == GenerateResult.StopReason.CONTEXT_FULL) System.err.println("[context full; /reset]");
        messages.add(ChatMessage.assistant(r.text));
      }
    }
    out.println();
  }
}
