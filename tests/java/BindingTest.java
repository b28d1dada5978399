// Tests of the Java binding against the CLI (same engine, same build): plain main(), no
// JUnit. Run by scripts/test-java:
//   java -Djava.library.path=DIR -cp minnow.jar:CLASSES BindingTest MODEL CLI CHAT_CLASSPATH
// Prints one line per test and "N passed, M failed"; exits 1 on any failure.
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.minnow.ChatMessage;
import org.minnow.Embedder;
import org.minnow.GenerateOptions;
import org.minnow.GenerateResult;
import org.minnow.GenerateResult.StopReason;
import org.minnow.MinnowException;
import org.minnow.Model;
import org.minnow.ModelInfo;
import org.minnow.Session;

public final class BindingTest {
  static String modelPath, cli, chatClasspath;
  static Model model;
  static final String PROMPT = "The capital of France is";

  interface Body { void run() throws Exception; }
  interface Thrower { void run() throws Exception; }

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: BindingTest MODEL CLI CHAT_CLASSPATH");
      System.exit(2);
    }
    modelPath = args[0];
    cli = args[1];
    chatClasspath = args[2];
    Map<String, Body> tests = new LinkedHashMap<>();
    tests.put("info", BindingTest::info);
    tests.put("model_options", BindingTest::modelOptions);
    tests.put("greedy_matches_cli", BindingTest::greedyMatchesCli);
    tests.put("tokenize_matches_cli", BindingTest::tokenizeMatchesCli);
    tests.put("logits_match_cli", BindingTest::logitsMatchCli);
    tests.put("sampling_matches_cli", BindingTest::samplingMatchesCli);
    tests.put("stop_strings", BindingTest::stopStrings);
    tests.put("callback_false_stops", BindingTest::callbackFalseStops);
    tests.put("cancel_from_another_thread", BindingTest::cancelFromAnotherThread);
    tests.put("callback_exception_propagates", BindingTest::callbackExceptionPropagates);
    tests.put("bad_arguments", BindingTest::badArguments);
    tests.put("use_after_close", BindingTest::useAfterClose);
    tests.put("close_in_any_order", BindingTest::closeInAnyOrder);
    tests.put("non_ascii_round_trip", BindingTest::nonAsciiRoundTrip);
    tests.put("non_ascii_generation_matches_cli", BindingTest::nonAsciiGenerationMatchesCli);
    tests.put("large_outputs", BindingTest::largeOutputs);
    tests.put("chat_template", BindingTest::chatTemplate);
    tests.put("chat_answer_matches_cli", BindingTest::chatAnswerMatchesCli);
    tests.put("prefix_reuse_and_reset", BindingTest::prefixReuseAndReset);
    tests.put("sessions_on_two_threads", BindingTest::sessionsOnTwoThreads);
    tests.put("chat_example_answers_piped_line", BindingTest::chatExample);
    tests.put("embeddings_match_cli", BindingTest::embeddingsMatchCli);
    tests.put("speculative_keeps_the_output", BindingTest::speculativeKeepsTheOutput);

    int passed = 0, failed = 0;
    try (Model m = Model.load(modelPath)) {
      model = m;
      for (Map.Entry<String, Body> t : tests.entrySet()) {
        long t0 = System.nanoTime();
        try {
          t.getValue().run();
          passed++;
          System.out.printf("ok    %-36s %6.2f s%n", t.getKey(), (System.nanoTime() - t0) / 1e9);
        } catch (Throwable e) {
          failed++;
          System.out.printf("FAIL  %-36s %s%n", t.getKey(), e);
          e.printStackTrace(System.out);
        }
      }
    }
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }

  // ---- Helpers ----------------------------------------------------------------------

  static void check(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  static void eq(Object expected, Object actual, String what) {
    if (expected == null ? actual != null : !expected.equals(actual))
      throw new AssertionError(what + ": expected <" + expected + "> but got <" + actual + ">");
  }

  static <T extends Throwable> T expect(Class<T> type, Thrower body) {
    try {
      body.run();
    } catch (Throwable e) {
      if (type.isInstance(e)) return type.cast(e);
      throw new AssertionError("expected " + type.getSimpleName() + " but got " + e, e);
    }
    throw new AssertionError("expected " + type.getSimpleName() + ", nothing was thrown");
  }

  static final class Proc {
    int rc;
    String out, err;
  }

  /** Runs a command (UTF-8 stdin/stdout), failing on a timeout. */
  static Proc exec(List<String> cmd, String stdin) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd);
    Process p = pb.start();
    ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
    Thread a = pump(p.getInputStream(), out), b = pump(p.getErrorStream(), err);
    try (OutputStream in = p.getOutputStream()) {
      if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + cmd);
    }
    a.join();
    b.join();
    Proc r = new Proc();
    r.rc = p.exitValue();
    r.out = new String(out.toByteArray(), StandardCharsets.UTF_8);
    r.err = new String(err.toByteArray(), StandardCharsets.UTF_8);
    return r;
  }

  static Thread pump(InputStream in, ByteArrayOutputStream to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[8192];
      try {
        for (int n; (n = in.read(buf)) > 0;) to.write(buf, 0, n);
      } catch (Exception ignored) {
        // the process ended
      }
    });
    t.start();
    return t;
  }

  /** The CLI on the test model; a failure is a test failure. */
  static Proc minnow(String stdin, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(cli);
    cmd.add(args[0]);
    cmd.add("-m");
    cmd.add(modelPath);
    cmd.addAll(Arrays.asList(args).subList(1, args.length));
    Proc p = exec(cmd, stdin);
    if (p.rc != 0) throw new AssertionError("minnow " + String.join(" ", args) + " failed: " + p.err);
    return p;
  }

  /** `minnow run` stdout without the newline it ends with. */
  static String cliRun(String... args) throws Exception {
    String[] all = new String[args.length + 2];
    all[0] = "run";
    System.arraycopy(args, 0, all, 1, args.length);
    all[all.length - 1] = "-q";
    String out = minnow(null, all).out;
    check(out.endsWith("\n"), "minnow run ends its output with a newline");
    return out.substring(0, out.length() - 1);
  }

  static int[] ints(String spaceSeparated) {
    String s = spaceSeparated.trim();
    if (s.isEmpty()) return new int[0];
    return Arrays.stream(s.split("[\\s,]+")).mapToInt(Integer::parseInt).toArray();
  }

  static String join(int[] ids) {
    StringBuilder b = new StringBuilder();
    for (int id : ids) b.append(b.length() > 0 ? " " : "").append(id);
    return b.toString();
  }

  static GenerateOptions greedy(int n) {
    return new GenerateOptions().maxTokens(n).temperature(0);
  }

  static boolean utf8Locale() {
    return "UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding"));
  }

  // ---- Tests ------------------------------------------------------------------------

  static void info() {
    ModelInfo i = model.info();
    eq("llama", i.architecture, "architecture");
    eq(49152, i.vocabSize, "vocab size");
    eq(30, i.nLayers, "layers");
    eq(576, i.dModel, "d_model");
    check(i.hasChatTemplate, "SmolLM2 has a chat template");
    check(i.nParams > 100_000_000L && i.weightBytes > 0, "parameter count and bytes");
    check(!Model.libraryVersion().isEmpty(), "library version");
    check(i.eosId >= 0 && model.isEndOfGeneration(i.eosId), "EOS ends generation");
    check(!model.isEndOfGeneration(-7), "an id outside the vocabulary does not");
  }

  static void modelOptions() throws Exception {
    String expected = cliRun("-p", PROMPT, "-n", "8", "--temp", "0", "--kv-type", "f32", "--ctx", "512", "-t", "1");
    Model.Options o = new Model.Options().kvType(Model.KvType.F32).contextSize(512).threads(1);
    try (Model m = Model.load(modelPath, o); Session s = m.newSession()) {
      eq(512, s.contextSize(), "context size from the model options");
      eq(expected, s.generate(PROMPT, greedy(8), null).text, "f32 KV cache (CLI vs Java)");
    }
    try (Model m = Model.load(modelPath, new Model.Options().kvType(Model.KvType.Q8_0).int8Activations(true));
         Session s = m.newSession(new Session.Options().contextSize(256).batchSize(2))) {
      eq(256, s.contextSize(), "a session overrides the context size");
      eq(8, s.generate(PROMPT, greedy(8), null).nGenerated, "q8_0 KV, int8 activations, batch 2");
    }
    // The Vulkan backend: the CPU's greedy text, or one clear error where there is no device.
    String cpu = cliRun("-p", PROMPT, "-n", "8", "--temp", "0");
    try (Model m = Model.load(modelPath, new Model.Options().backend(Model.Backend.VULKAN)); Session s = m.newSession()) {
      eq(cpu, s.generate(PROMPT, greedy(8), null).text, "Vulkan backend (CLI on the CPU vs Java on Vulkan)");
      try (Model half = Model.load(modelPath, new Model.Options().backend(Model.Backend.VULKAN).gpuLayers(10));
           Session hs = half.newSession()) {
        eq(cpu, hs.generate(PROMPT, greedy(8), null).text, "Vulkan backend with 10 layers on the device");
      }
    } catch (MinnowException e) {
      check(e.getMessage().toLowerCase().contains("vulkan"), "a Vulkan failure names Vulkan: " + e.getMessage());
    }
  }

  static void greedyMatchesCli() throws Exception {
    Proc p = minnow(null, "run", "-p", PROMPT, "-n", "16", "--temp", "0");
    String expected = p.out.substring(0, p.out.length() - 1);
    Matcher m = Pattern.compile("prompt: (\\d+) tokens.*generated: (\\d+) tokens").matcher(p.err);
    check(m.find(), "CLI timings line: " + p.err);

    StringBuilder streamed = new StringBuilder();
    List<Integer> ids = new ArrayList<>();
    GenerateResult r;
    try (Session s = model.newSession()) {
      r = s.generate(PROMPT, greedy(16), (piece, token) -> {
        streamed.append(piece);
        if (token >= 0) ids.add(token);
        return true;
      });
    }
    eq(expected, r.text, "greedy text (CLI vs Java)");
    eq(expected, streamed.toString(), "streamed pieces");
    eq(Integer.parseInt(m.group(1)), r.nPrompt, "prompt tokens");
    eq(Integer.parseInt(m.group(2)), r.nGenerated, "generated tokens");
    eq(StopReason.MAX_TOKENS, r.stopReason, "stop reason");
    eq(16, ids.size(), "a callback per token");
    eq(ids.toString(), Arrays.toString(r.tokens), "result tokens are the streamed ones");
    eq(expected, model.detokenize(r.tokens), "detokenized tokens");
    check(r.promptSeconds > 0 && r.generateSeconds > 0, "timings");

    try (Session s = model.newSession()) {  // the same from token ids
      eq(expected, s.generate(model.tokenize(PROMPT), greedy(16), null).text, "generate(int[])");
    }
  }

  // Prompt lookup and a draft model (the model itself: the same vocabulary) leave greedy
  // output as it was; a draft of another vocabulary is refused.
  static void speculativeKeepsTheOutput() throws Exception {
    String prompt = model.applyChatTemplate(true, ChatMessage.user("Repeat exactly: one two three, one two three."));
    String plain;
    try (Session s = model.newSession()) {
      plain = s.generate(prompt, greedy(24), null).text;
    }
    try (Model draft = Model.load(modelPath); Session s = model.newSession()) {
      eq(plain, s.generate(prompt, greedy(24).lookupDraft(8), null).text, "prompt lookup");
      s.setDraft(draft, 4, 0f);
      s.reset();
      eq(plain, s.generate(prompt, greedy(24), null).text, "draft model");
      s.reset();
      eq(plain, s.generate(prompt, greedy(24).lookupDraft(4), null).text, "prompt lookup, then the draft model");
      expect(MinnowException.class, () -> s.setDraft(draft, 0, 0.5f));
      String tiny = java.nio.file.Paths.get(modelPath).toAbsolutePath().getParent().getParent().resolve("tests/reference/tiny/qwen2.gguf").toString();
      try (Model other = Model.load(tiny)) {
        MinnowException e = expect(MinnowException.class, () -> s.setDraft(other, 4, 0.5f));
        check(e.getMessage().contains("vocabulary"), "the vocabulary is named: " + e.getMessage());
      }
      s.setDraft(null, 0, 0f);
      s.reset();
      eq(plain, s.generate(prompt, greedy(24), null).text, "draft off again");
    }
  }

  // all-MiniLM-L6-v2 beside the LLM (scripts/fetch-models --minilm); skipped without it.
  static void embeddingsMatchCli() throws Exception {
    java.io.File dir = new java.io.File(new java.io.File(modelPath).getParentFile(), "all-MiniLM-L6-v2");
    if (!new java.io.File(dir, "model.safetensors").exists()) {
      System.out.println("      (skipped: " + dir + " is missing)");
      return;
    }
    String[] texts = {"A cat sits on the mat.", "Ein Hund schläft 😴", "x = f(y) + 1"};
    List<String> cmd = new ArrayList<>(Arrays.asList(cli, "embed", "-m", dir.getPath(), "-t", "2"));
    cmd.addAll(Arrays.asList(texts));
    Proc p = exec(cmd, null);
    check(p.rc == 0, "minnow embed: " + p.err);
    String[] lines = p.out.trim().split("\n");
    eq(texts.length, lines.length, "one CLI line per text");
    Embedder e = Embedder.load(dir.getPath(), 2, null);
    try {
      eq(384, e.dim(), "dimension");
      float[][] v = e.embed(texts);
      for (int i = 0; i < texts.length; i++) {
        String[] want = lines[i].replaceAll("[\\[\\]]", "").split(",");
        eq(384, want.length, "CLI floats");
        for (int k = 0; k < 384; k++)
          check(Math.abs(v[i][k] - Float.parseFloat(want[k])) <= 1e-6f, "text " + i + " value " + k);
      }
    } finally {
      e.close();
    }
    expect(IllegalStateException.class, () -> e.embed("after close"));
    e.close();  // a second close is harmless
    MinnowException bad = expect(MinnowException.class, () -> Embedder.load("/nonexistent", null));
    check(bad.getMessage().contains("not a model directory"), "a bad directory is named: " + bad.getMessage());
  }

  static void tokenizeMatchesCli() throws Exception {
    String text = "Hello world, the quick brown fox. <|im_start|>user";
    eq(minnow(null, "tokenize", text).out.trim(), join(model.tokenize(text)), "ids (CLI vs Java)");
    eq(minnow(null, "tokenize", "--no-parse-special", text).out.trim(), join(model.tokenize(text, false)),
       "ids without special-token parsing");
    eq(text, model.detokenize(model.tokenize(text), true), "round trip with special tokens rendered");
    eq(0, model.tokenize("").length, "empty text");
  }

  static void logitsMatchCli() throws Exception {
    int[] ids = model.tokenize(PROMPT);
    float[] logits;
    try (Session s = model.newSession()) {
      logits = s.logits(ids);
    }
    eq(model.info().vocabSize, logits.length, "one logit per vocabulary entry");
    String json = minnow(null, "logits", "--tokens", join(ids), "--top", "5", "--json").out;
    String last = json.substring(json.lastIndexOf("\"top\""));
    Matcher m = Pattern.compile("\\[(\\d+),(-?[0-9.eE+-]+)\\]").matcher(last);
    Integer[] order = new Integer[logits.length];
    for (int i = 0; i < order.length; i++) order[i] = i;
    Arrays.sort(order, (a, b) -> Float.compare(logits[b], logits[a]));
    for (int k = 0; k < 5; k++) {
      check(m.find(), "CLI top-5 entry " + k + " in " + last);
      int id = Integer.parseInt(m.group(1));
      float v = Float.parseFloat(m.group(2));
      eq(id, order[k], "top-" + (k + 1) + " id");
      check(Math.abs(logits[id] - v) <= 1e-4f * Math.max(1f, Math.abs(v)),
            "logit of " + id + ": CLI " + v + ", Java " + logits[id]);
    }
    try (Session s = model.newSession()) {  // the first greedy token is the argmax
      eq(order[0], s.generate(ids, greedy(1), null).tokens[0], "greedy token = argmax of logits");
    }
  }

  static void samplingMatchesCli() throws Exception {
    // Defaults (top-k 40, top-p 0.95, min-p 0.05) and every other sampling field, by seed.
    String expected = cliRun("-p", "Once upon a time", "-n", "24", "--temp", "1.0", "--seed", "7");
    try (Session s = model.newSession()) {
      GenerateOptions o = new GenerateOptions().maxTokens(24).temperature(1.0f).seed(7);
      eq(expected, s.generate("Once upon a time", o, null).text, "seeded sampling with defaults");
      s.reset();
      eq(expected, s.generate("Once upon a time", o, null).text, "same seed, same text");
    }
    expected = cliRun("-p", "Once upon a time", "-n", "24", "--temp", "0.9", "--seed", "3", "--top-k", "5",
                      "--top-p", "0.9", "--min-p", "0.1", "--repeat-penalty", "1.3", "--repeat-last-n", "16");
    try (Session s = model.newSession()) {
      GenerateOptions o = new GenerateOptions().maxTokens(24).temperature(0.9f).seed(3).topK(5).topP(0.9f)
                              .minP(0.1f).repeatPenalty(1.3f).repeatLastN(16);
      eq(expected, s.generate("Once upon a time", o, null).text, "every sampling option");
    }
  }

  static void stopStrings() throws Exception {
    String full;
    try (Session s = model.newSession()) {
      full = s.generate(PROMPT, greedy(16), null).text;
    }
    String stop = full.substring(full.length() / 2, full.length() / 2 + 3);
    String expected = full.substring(0, full.indexOf(stop));
    StringBuilder streamed = new StringBuilder();
    try (Session s = model.newSession()) {
      GenerateResult r = s.generate(PROMPT, greedy(16).stop("no such text", stop), (piece, token) -> {
        streamed.append(piece);
        return true;
      });
      eq(StopReason.STOP_STRING, r.stopReason, "stop reason (stop '" + stop + "' in '" + full + "')");
      eq(expected, r.text, "text before the stop string");
      eq(expected, streamed.toString(), "no part of the stop string is streamed");
      s.reset();
      eq(StopReason.MAX_TOKENS, s.generate(PROMPT, greedy(16).stop("zzz\u00e9\u00e9"), null).stopReason,
         "an absent stop string does not stop");
    }
    expect(IllegalArgumentException.class, () -> new GenerateOptions().stop(""));
    expect(NullPointerException.class, () -> new GenerateOptions().stop("a", null));
  }

  static void callbackFalseStops() {
    AtomicInteger calls = new AtomicInteger();
    try (Session s = model.newSession()) {
      GenerateResult r = s.generate(PROMPT, greedy(50), (piece, token) -> calls.incrementAndGet() < 3);
      eq(StopReason.CANCELLED, r.stopReason, "stop reason");
      eq(3, calls.get(), "no call after false");
      eq(3, r.nGenerated, "generated tokens");
    }
  }

  static void cancelFromAnotherThread() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    try (Session s = model.newSession()) {
      Thread canceller = new Thread(() -> {
        try {
          started.await();
          s.cancel();
        } catch (InterruptedException ignored) {
          Thread.currentThread().interrupt();
        }
      });
      canceller.start();
      GenerateOptions o = greedy(400).stopAtEndOfGeneration(false);
      GenerateResult r = s.generate(PROMPT, o, (piece, token) -> {
        calls.incrementAndGet();
        started.countDown();
        return true;
      });
      canceller.join();
      eq(StopReason.CANCELLED, r.stopReason, "stop reason");
      check(r.nGenerated < 400 && calls.get() >= 1, "stopped early: " + r.nGenerated + " tokens");
      s.cancel();  // with nothing running: harmless, and the next generation is not affected
      eq(StopReason.MAX_TOKENS, s.generate(PROMPT, greedy(4), null).stopReason, "next generation runs");
    }
  }

  static void callbackExceptionPropagates() {
    RuntimeException boom = new IllegalStateException("boom from the callback");
    AtomicInteger calls = new AtomicInteger();
    try (Session s = model.newSession()) {
      RuntimeException got = expect(RuntimeException.class, () -> s.generate(PROMPT, greedy(50), (piece, token) -> {
        if (calls.incrementAndGet() == 2) throw boom;
        return true;
      }));
      check(got == boom, "the callback's own exception: " + got);
      eq(2, calls.get(), "no call after the exception");
      AssertionError error = new AssertionError("an Error too");
      check(expect(AssertionError.class, () -> s.generate(PROMPT, greedy(8), (p, t) -> { throw error; })) == error,
            "an Error propagates as itself");
      GenerateResult r = s.generate(PROMPT, greedy(4), null);
      eq(4, r.nGenerated, "the session still works");
      // Calling the session from its own callback is refused, and that refusal propagates.
      expect(IllegalStateException.class, () -> s.generate(PROMPT, greedy(4), (p, t) -> {
        s.reset();
        return true;
      }));
    }
  }

  static void badArguments() throws Exception {
    String missing = "/nonexistent/dir/mod\u00e8le-\uD83D\uDE42.gguf";
    MinnowException e = expect(MinnowException.class, () -> Model.load(missing, null));
    check(e.getMessage().contains(missing), "the message names the path: " + e.getMessage());
    eq("MINNOW_ERR_LOAD", e.statusName(), "status name");
    eq(3, e.status(), "status code");
    Path bad = Files.createTempFile("minnow-bad", ".gguf");
    try {
      Files.write(bad, "this is not a model at all".getBytes(StandardCharsets.UTF_8));
      eq("MINNOW_ERR_LOAD", expect(MinnowException.class, () -> Model.load(bad.toString())).statusName(),
         "not a GGUF file");
    } finally {
      Files.delete(bad);
    }
    expect(NullPointerException.class, () -> Model.load(null));
    expect(IllegalArgumentException.class, () -> Model.load("a\0b"));
    expect(MinnowException.class, () -> Model.load(modelPath, new Model.Options().threads(-1)));

    expect(NullPointerException.class, () -> model.tokenize(null));
    expect(NullPointerException.class, () -> model.detokenize(null));
    eq("MINNOW_ERR_INVALID_ARGUMENT", expect(MinnowException.class, () -> model.detokenize(new int[] {-5})).statusName(),
       "negative token id");
    expect(MinnowException.class, () -> model.detokenize(new int[] {1 << 30}));
    expect(NullPointerException.class, () -> model.applyChatTemplate(null, true));
    expect(NullPointerException.class, () -> model.applyChatTemplate(true, ChatMessage.user("hi"), null));
    expect(NullPointerException.class, () -> new ChatMessage("user", null));
    expect(MinnowException.class, () -> model.applyChatTemplateJson("{not json"));
    expect(NullPointerException.class, () -> new Session(null));
    try (Session s = model.newSession()) {
      expect(NullPointerException.class, () -> s.generate((String) null, null, null));
      expect(NullPointerException.class, () -> s.generate((int[]) null, null, null));
      expect(IllegalArgumentException.class, () -> s.generate("nul\0inside", null, null));
      expect(NullPointerException.class, () -> s.logits(null));
      expect(MinnowException.class, () -> s.generate(new int[0], null, null));
      expect(MinnowException.class, () -> s.generate(new int[] {-1}, null, null));
      expect(MinnowException.class, () -> s.logits(new int[0]));
      expect(MinnowException.class, () -> s.logits(new int[] {99999999}));
      eq("MINNOW_ERR_INVALID_ARGUMENT",
         expect(MinnowException.class, () -> s.generate(PROMPT, new GenerateOptions().maxTokens(-1), null)).statusName(),
         "negative max tokens");
      expect(MinnowException.class, () -> s.generate(PROMPT, new GenerateOptions().temperature(Float.NaN), null));
      eq(2, s.generate(PROMPT, greedy(2), null).nGenerated, "the session works after all that");
    }
    try (Session small = model.newSession(new Session.Options().contextSize(16))) {
      eq(16, small.contextSize(), "context size");
      StringBuilder longPrompt = new StringBuilder();
      for (int i = 0; i < 100; i++) longPrompt.append("word ");
      eq("MINNOW_ERR_CONTEXT_FULL",
         expect(MinnowException.class, () -> small.generate(longPrompt.toString(), null, null)).statusName(),
         "a prompt longer than the context");
      eq(StopReason.CONTEXT_FULL,
         small.generate(PROMPT, greedy(100).stopAtEndOfGeneration(false), null).stopReason, "generation fills the context");
    }
  }

  static void useAfterClose() {
    Model m = Model.load(modelPath);
    Session s = m.newSession();
    s.close();
    s.close();  // idempotent
    expect(IllegalStateException.class, () -> s.generate(PROMPT, null, null));
    expect(IllegalStateException.class, () -> s.generate(new int[] {1}, null, null));
    expect(IllegalStateException.class, s::reset);
    expect(IllegalStateException.class, () -> s.logits(new int[] {1}));
    expect(IllegalStateException.class, s::nPast);
    s.cancel();  // a no-op once closed
    m.close();
    m.close();
    expect(IllegalStateException.class, () -> m.tokenize("hi"));
    expect(IllegalStateException.class, () -> m.detokenize(new int[] {1}));
    expect(IllegalStateException.class, m::info);
    expect(IllegalStateException.class, () -> m.applyChatTemplate(true, ChatMessage.user("hi")));
    expect(IllegalStateException.class, m::newSession);
  }

  static void closeInAnyOrder() throws Exception {
    Model m = Model.load(modelPath);
    Session s = m.newSession();
    m.close();  // the open session keeps the model alive
    eq(4, s.generate(PROMPT, greedy(4), null).nGenerated, "a session outlives its closed model");
    expect(IllegalStateException.class, () -> m.tokenize("hi"));
    s.close();  // frees the model too

    // close() from another thread waits for the running generation, which it cancels.
    try (Model m2 = Model.load(modelPath)) {
      Session s2 = m2.newSession();
      CountDownLatch started = new CountDownLatch(1);
      AtomicReference<GenerateResult> result = new AtomicReference<>();
      Thread t = new Thread(() -> result.set(s2.generate(PROMPT, greedy(400).stopAtEndOfGeneration(false), (p, id) -> {
        started.countDown();
        return true;
      })));
      t.start();
      check(started.await(60, TimeUnit.SECONDS), "generation started");
      s2.close();
      t.join();
      eq(StopReason.CANCELLED, result.get().stopReason, "closing cancels");
      expect(IllegalStateException.class, s2::nPast);

      // ... and from its own callback, it frees the session once generate() returns.
      Session s3 = m2.newSession();
      GenerateResult r = s3.generate(PROMPT, greedy(50), (p, id) -> {
        s3.close();
        return true;
      });
      eq(StopReason.CANCELLED, r.stopReason, "closing from the callback stops");
      expect(IllegalStateException.class, s3::nPast);
    }
  }

  static final String UNICODE = "Gr\u00fc\u00dfe, \u4e16\u754c! caf\u00e9 na\u00efve \u2014 \uD83D\uDE42\uD83D\uDE80 "
      + "\uD83D\uDC69\u200D\uD83D\uDCBB \uD834\uDD1E \u00c5ngstr\u00f6m \u0928\u092e\u0938\u094d\u0924\u0947";

  static void nonAsciiRoundTrip() throws Exception {
    int[] ids = model.tokenize(UNICODE);
    check(ids.length > 0, "tokens");
    eq(UNICODE, model.detokenize(ids), "detokenize(tokenize(text))");
    // The CLI reads the text as a JSON string on stdin (raw UTF-8), so no locale is involved.
    String json = minnow("\"" + UNICODE + "\"\n", "tokenize", "--lines").out;
    Matcher m = Pattern.compile("\"ids\":\\[([^\\]]*)\\]").matcher(json);
    check(m.find(), "CLI ids in " + json);
    eq(join(ints(m.group(1))), join(ids), "ids (CLI vs Java)");
    // A token that is half a character: raw bytes are exact, the String has U+FFFD.
    int[] emoji = model.tokenize("\uD83D\uDE42");
    if (emoji.length > 1) {
      byte[] first = model.detokenizeBytes(new int[] {emoji[0]}, false);
      check(first.length > 0 && first.length < 4, "part of the emoji's 4 bytes");
      check(model.detokenize(new int[] {emoji[0]}).contains("\uFFFD"), "a cut character decodes to U+FFFD");
    }
  }

  static void nonAsciiGenerationMatchesCli() throws Exception {
    String prompt = "\uD83D\uDE42\uD83D\uDE42\uD83D\uDE42 \uD83D\uDE80\uD83D\uDE80\uD83D\uDE80 caf\u00e9 \u4e16\u754c "
        + "\uD83D\uDE42\uD83D\uDE42\uD83D\uDE42";
    StringBuilder streamed = new StringBuilder();
    GenerateResult r;
    try (Session s = model.newSession()) {
      r = s.generate(prompt, greedy(24), (piece, token) -> {
        check(!piece.contains("\uFFFD"), "pieces are whole characters: '" + piece + "'");
        streamed.append(piece);
        return true;
      });
    }
    eq(r.text, streamed.toString(), "streamed pieces");
    eq(r.text, model.detokenize(r.tokens), "text = detokenize(tokens)");
    check(r.text.codePoints().anyMatch(c -> c > 0xFFFF), "the answer has a 4-byte character: " + r.text);
    if (!utf8Locale()) throw new AssertionError("run with a UTF-8 locale (LC_ALL=C.UTF-8) to pass the prompt to the CLI");
    eq(cliRun("-p", prompt, "-n", "24", "--temp", "0"), r.text, "text (CLI vs Java)");
  }

  static void largeOutputs() {
    // The longest vocabulary entry, many times: more text than the first buffer guess.
    int longest = 0, longestLen = 0;
    for (int id = 0; id < model.info().vocabSize; id++) {
      int n = model.detokenizeBytes(new int[] {id}, false).length;
      if (n > longestLen) {
        longest = id;
        longestLen = n;
      }
    }
    check(longestLen > 8, "a vocabulary entry longer than 8 bytes");
    int[] ids = new int[5000];
    Arrays.fill(ids, longest);
    String one = model.detokenize(new int[] {longest});
    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < ids.length; i++) expected.append(one);
    eq(expected.toString(), model.detokenize(ids), "5000 x the longest token");
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 400; i++) text.append(UNICODE).append(' ').append(i).append('\n');
    eq(text.toString(), model.detokenize(model.tokenize(text.toString())), "a long text round trip");
    StringBuilder content = new StringBuilder();
    for (int i = 0; i < 2000; i++) content.append("word").append(i).append(' ');
    check(model.applyChatTemplate(true, ChatMessage.user(content.toString())).contains(content), "a long message");
  }

  static void chatTemplate() throws Exception {
    List<ChatMessage> messages = Arrays.asList(ChatMessage.system("Be brief."),
                                               ChatMessage.user("Wie geht's? \uD83D\uDE42 \"quoted\""));
    String prompt = model.applyChatTemplate(messages, true);
    check(prompt.contains("<|im_start|>user\nWie geht's? \uD83D\uDE42 \"quoted\"<|im_end|>"), prompt);
    check(prompt.endsWith("<|im_start|>assistant\n"), "ends with the assistant's header: " + prompt);
    check(!model.applyChatTemplate(messages, false).endsWith("<|im_start|>assistant\n"), "no generation prompt");
    String json = "[{\"role\": \"system\", \"content\": \"Be brief.\"}, "
        + "{\"role\": \"user\", \"content\": \"Wie geht's? \uD83D\uDE42 \\\"quoted\\\"\"}]";
    eq(prompt, model.applyChatTemplateJson("{\"messages\": " + json + ", \"add_generation_prompt\": true}"),
       "applyChatTemplateJson");
    Path file = Files.createTempFile("minnow-chat", ".json");
    try {
      Files.write(file, json.getBytes(StandardCharsets.UTF_8));
      String out = minnow(null, "template", "--messages", file.toString(), "--add-generation-prompt").out;
      check(out.equals(prompt) || out.equals(prompt + "\n"), "CLI template: <" + out + "> vs <" + prompt + ">");
    } finally {
      Files.delete(file);
    }
  }

  static void chatAnswerMatchesCli() throws Exception {
    String question = "What is the capital of France?";
    String expected = cliRun("--chat", "-p", question, "-n", "32", "--temp", "0");
    try (Session s = model.newSession()) {
      String prompt = model.applyChatTemplate(true, ChatMessage.user(question));
      GenerateResult r = s.generate(prompt, greedy(32), null);
      eq(expected, r.text, "chat answer (CLI vs Java)");
      check(r.text.contains("Paris"), r.text);
    }
  }

  static void prefixReuseAndReset() {
    try (Session s = model.newSession()) {
      eq(0, s.nPast(), "a new session is empty");
      GenerateResult a = s.generate(PROMPT, greedy(8), null);
      eq(0, a.nReused, "nothing to reuse at first");
      check(s.nPast() >= a.nPrompt, "the cache holds the prompt: " + s.nPast());
      GenerateResult b = s.generate(PROMPT + a.text, greedy(8), null);
      check(b.nReused >= a.nPrompt, "the cached prefix is reused: " + b);
      s.reset();
      eq(0, s.nPast(), "reset empties the cache");
      GenerateResult c = s.generate(PROMPT, greedy(8), null);
      eq(0, c.nReused, "nothing reused after reset");
      eq(a.text, c.text, "same text after reset");
    }
  }

  static void sessionsOnTwoThreads() throws Exception {
    String expected;
    try (Session s = model.newSession()) {
      expected = s.generate(PROMPT, greedy(16), null).text;
    }
    String[] got = new String[2];
    Thread[] threads = new Thread[2];
    AtomicReference<Throwable> error = new AtomicReference<>();
    for (int i = 0; i < 2; i++) {
      final int k = i;
      threads[i] = new Thread(() -> {
        try (Session s = model.newSession(new Session.Options().threads(1))) {
          got[k] = s.generate(PROMPT, greedy(16), null).text;
        } catch (Throwable t) {
          error.set(t);
        }
      });
      threads[i].start();
    }
    for (Thread t : threads) t.join();
    if (error.get() != null) throw new AssertionError("a thread failed", error.get());
    eq(expected, got[0], "thread 1");
    eq(expected, got[1], "thread 2");
  }

  static void chatExample() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    List<String> cmd = Arrays.asList(java, "-Djava.library.path=" + System.getProperty("java.library.path"), "-cp",
                                     chatClasspath, "Chat", modelPath, "--temp", "0", "-n", "48");
    Proc p = exec(cmd, "What is the capital of France?\n");
    eq(0, p.rc, "exit code (stderr: " + p.err + ")");
    check(p.out.startsWith("> ") && p.out.contains("Paris"), "answer: " + p.out);
    check(p.err.contains("minnow chat"), "banner on stderr: " + p.err);
  }
}
