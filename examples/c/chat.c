/* A terminal chat over minnow's C API: each line read is a user turn; the answer streams
 * back. The session keeps the conversation's KV cache, so each turn only evaluates what
 * the chat template adds.
 *   cc chat.c $(pkg-config --cflags --libs minnow) -o chat && ./chat -m model.gguf */
#include <minnow/minnow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TURNS 64

static bool print_piece(const char* piece, size_t len, int32_t token, void* answer) {
  (void)token;
  fwrite(piece, 1, len, stdout);
  fflush(stdout);
  strncat((char*)answer, piece, len < 4095 - strlen(answer) ? len : 4095 - strlen(answer));
  return true;
}

static int fail(const char* what) {
  fprintf(stderr, "chat: %s: %s\n", what, minnow_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const char* path = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
  minnow_generate_params gp = minnow_generate_params_default();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-m")) path = argv[i + 1];
    else if (!strcmp(argv[i], "-n")) gp.max_tokens = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--temp")) gp.temperature = (float)atof(argv[i + 1]);
    else { fprintf(stderr, "usage: chat [-m MODEL] [-n MAX_TOKENS] [--temp T]\n"); return 2; }
  }
  minnow_model* model = NULL;
  minnow_session* session = NULL;
  if (minnow_model_load(path, NULL, &model) != MINNOW_OK) return fail("load");
  if (minnow_session_create(model, NULL, &session) != MINNOW_OK) return fail("session");

  static char texts[2 * MAX_TURNS][4096];  /* user lines and answers */
  minnow_chat_message messages[2 * MAX_TURNS];
  size_t n = 0;
  char* prompt = NULL;
  size_t prompt_cap = 0;
  while (n + 2 <= 2 * MAX_TURNS && fgets(texts[n], sizeof texts[n], stdin)) {
    texts[n][strcspn(texts[n], "\n")] = '\0';
    if (texts[n][0] == '\0') continue;
    messages[n] = (minnow_chat_message){"user", texts[n]};
    size_t len = 0;
    minnow_status st = minnow_chat_apply(model, messages, n + 1, true, prompt, prompt_cap, &len);
    if (st == MINNOW_ERR_BUFFER_TOO_SMALL) {  /* grow and render again */
      prompt_cap = len + 1;
      prompt = realloc(prompt, prompt_cap);
      st = minnow_chat_apply(model, messages, n + 1, true, prompt, prompt_cap, &len);
    }
    if (st != MINNOW_OK) return fail("chat template");
    char* answer = texts[n + 1];
    answer[0] = '\0';
    if (minnow_generate(session, prompt, &gp, print_piece, answer, NULL) != MINNOW_OK) return fail("generate");
    printf("\n");
    messages[n + 1] = (minnow_chat_message){"assistant", answer};
    n += 2;
  }
  free(prompt);
  minnow_session_free(session);
  minnow_model_free(model);
  return 0;
}
