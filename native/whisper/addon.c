// Parley's whisper.cpp binding: load a ggml model, count a text's tokens, transcribe 16 kHz
// mono float PCM off the event loop (with an initial prompt, segments with their words),
// stop a running transcription.
// scripts/native-whisper.ts builds it at install against whisper.cpp's own sources for this
// machine's CPU (decision 046).
#include <node_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <whisper.h>

#include "napi-shared.h"
#include "parley-parakeet.h"

// ---- the whisper thread ------------------------------------------------------------------
// Every whisper.cpp call of the process runs on this one thread of ours, so the process has
// one OpenMP master. libgomp counts the workers of every thread that ever led a parallel
// region; once that count passes the CPUs, its barriers stop spinning and sleep on a futex
// at each of ggml's many barriers. N-API async work runs on whichever pool thread is free,
// so after a few calls there were two masters on two cores and transcription ran ~5% slower
// than whisper-cli (decision 046). The pool thread hands its call over here and waits.

typedef struct whisper_call {
  void (*run)(void *);
  void *arg;
  bool done;
  struct whisper_call *next;
} whisper_call;

static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t call_queued = PTHREAD_COND_INITIALIZER;
static pthread_cond_t call_done = PTHREAD_COND_INITIALIZER;
static whisper_call *first_call, *last_call;
static enum { NOT_STARTED, RUNNING, FAILED } whisper_thread_state = NOT_STARTED;

static void *whisper_thread(void *unused) {
  (void)unused;
  pthread_mutex_lock(&calls_lock);
  for (;;) {
    while (!first_call) pthread_cond_wait(&call_queued, &calls_lock);
    whisper_call *call = first_call;
    first_call = call->next;
    if (!first_call) last_call = NULL;
    pthread_mutex_unlock(&calls_lock);
    call->run(call->arg);
    pthread_mutex_lock(&calls_lock);
    call->done = true;
    pthread_cond_broadcast(&call_done);
  }
  return NULL;
}

/** Runs `run(arg)` on the whisper thread and returns when it has; on the caller's thread if that thread cannot start. */
static void on_whisper_thread(void (*run)(void *), void *arg) {
  whisper_call call = {run, arg, false, NULL};
  pthread_mutex_lock(&calls_lock);
  if (whisper_thread_state == NOT_STARTED) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    whisper_thread_state = pthread_create(&thread, &attr, whisper_thread, NULL) == 0 ? RUNNING : FAILED;
    pthread_attr_destroy(&attr);
  }
  if (whisper_thread_state == FAILED) {
    pthread_mutex_unlock(&calls_lock);
    run(arg);
    return;
  }
  if (last_call) last_call->next = &call;
  else first_call = &call;
  last_call = &call;
  pthread_cond_signal(&call_queued);
  while (!call.done) pthread_cond_wait(&call_done, &calls_lock);
  pthread_mutex_unlock(&calls_lock);
}

static void free_context(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  whisper_free((struct whisper_context *)data);
}

// ---- load(path): Promise<context> -------------------------------------------------------

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char *path;
  struct whisper_context *ctx;
} load_job;

static void load_on_whisper_thread(void *data) {
  load_job *job = data;
  struct whisper_context_params params = whisper_context_default_params();
  params.use_gpu = false;
  job->ctx = whisper_init_from_file_with_params(job->path, params);
}

static void load_execute(napi_env env, void *data) {
  (void)env;
  on_whisper_thread(load_on_whisper_thread, data);
}

static void load_complete(napi_env env, napi_status status, void *data) {
  load_job *job = data;
  if (status == napi_ok && job->ctx) {
    napi_value handle;
    napi_create_external(env, job->ctx, free_context, NULL, &handle);
    napi_resolve_deferred(env, job->deferred, handle);
  } else {
    napi_reject_deferred(env, job->deferred, parley_error_value(env, "whisper.cpp could not load the model file"));
  }
  napi_delete_async_work(env, job->work);
  free(job->path);
  free(job);
}

static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], promise, name;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  size_t length;
  CHECK(env, napi_get_value_string_utf8(env, argv[0], NULL, 0, &length));
  load_job *job = calloc(1, sizeof *job);
  job->path = malloc(length + 1);
  CHECK(env, napi_get_value_string_utf8(env, argv[0], job->path, length + 1, &length));
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "parley-whisper.load", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, load_execute, load_complete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

// ---- transcribe(context, pcm, options): { promise, stop() } ------------------------------

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref context_ref;  // keeps the model alive while the worker uses it
  struct whisper_context *ctx;
  float *pcm;
  int samples;
  char language[16];
  char *prompt;  // the initial prompt (vocabulary), or NULL
  int threads, best_of;
  float temperature, temperature_inc;
  stop_flag *flag;
  int result;
} transcribe_job;

static void transcribe_on_whisper_thread(void *data) {
  transcribe_job *job = data;
  struct whisper_full_params params = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
  params.language = job->language;
  params.detect_language = false;
  params.n_threads = job->threads;
  params.greedy.best_of = job->best_of;
  params.temperature = job->temperature;
  params.temperature_inc = job->temperature_inc;
  params.print_progress = false;
  params.print_realtime = false;
  params.print_timestamps = false;
  params.print_special = false;
  // Times for each token (from the timestamp tokens' probabilities, then the signal's energy):
  // the words' times. A pass over the tokens after decoding; the decoding itself is unchanged.
  params.token_timestamps = true;
  params.abort_callback = parley_should_abort;
  params.abort_callback_user_data = job->flag;
  if (job->prompt) {
    params.initial_prompt = job->prompt;
    // Kept before every 30 s window's rolling context, not only the first (decision 158).
    params.carry_initial_prompt = true;
  }
  job->result = whisper_full(job->ctx, params, job->pcm, job->samples);
}

static void transcribe_execute(napi_env env, void *data) {
  (void)env;
  on_whisper_thread(transcribe_on_whisper_thread, data);
}

/** A word being gathered from its tokens: their bytes, first and last times (10 ms units), summed probabilities. */
typedef struct {
  char *text;
  size_t length, capacity;
  int64_t t0, t1;
  double p;
  int tokens;
} word_buffer;

static void append_bytes(word_buffer *w, const char *bytes, size_t n) {
  if (w->length + n + 1 > w->capacity) {
    w->capacity = (w->length + n + 1) * 2;
    w->text = realloc(w->text, w->capacity);
  }
  memcpy(w->text + w->length, bytes, n);
  w->length += n;
  w->text[w->length] = '\0';
}

/** Appends the gathered word to `words` (unless it is only spaces) and empties the buffer. */
static void flush_word(napi_env env, word_buffer *w, napi_value words, uint32_t *count) {
  size_t skip = 0;
  while (skip < w->length && w->text[skip] == ' ') skip++;
  if (w->tokens > 0 && skip < w->length) {
    napi_value word, text;
    napi_create_object(env, &word);
    parley_set_number(env, word, "t0", (double)w->t0 * 10);
    parley_set_number(env, word, "t1", (double)w->t1 * 10);
    // Made once from the whole word's bytes: a character split across two tokens is whole here.
    napi_create_string_utf8(env, w->text + skip, w->length - skip, &text);
    napi_set_named_property(env, word, "text", text);
    parley_set_number(env, word, "p", w->p / w->tokens);
    napi_set_element(env, words, (*count)++, word);
  }
  w->length = 0;
  w->tokens = 0;
  w->p = 0;
}

/**
 * A segment's words in ms with the mean probability of their tokens. Whisper's tokens are
 * pieces of words: a token that begins with a space begins a word, any other (a word's rest,
 * punctuation) joins the word before it, as whisper.cpp's own split_on_word does. Special and
 * timestamp tokens (ids from end-of-text on) are no words.
 */
static napi_value words_value(napi_env env, struct whisper_context *ctx, int segment, word_buffer *w) {
  napi_value words;
  napi_create_array(env, &words);
  uint32_t count = 0;
  whisper_token eot = whisper_token_eot(ctx);
  for (int t = 0, n = whisper_full_n_tokens(ctx, segment); t < n; t++) {
    whisper_token_data token = whisper_full_get_token_data(ctx, segment, t);
    if (token.id >= eot) continue;
    const char *text = whisper_full_get_token_text(ctx, segment, t);
    if (text[0] == ' ') flush_word(env, w, words, &count);
    if (w->tokens == 0) w->t0 = token.t0;
    w->t1 = token.t1 > w->t0 ? token.t1 : w->t0;
    w->p += token.p;
    w->tokens++;
    append_bytes(w, text, strlen(text));
  }
  flush_word(env, w, words, &count);
  return words;
}

/** Segments with times in ms, the mean probability of their text tokens (null when none) and their words. */
static napi_value transcription_value(napi_env env, struct whisper_context *ctx) {
  napi_value result, segments, language;
  napi_create_object(env, &result);
  int count = whisper_full_n_segments(ctx);
  napi_create_array_with_length(env, count, &segments);
  whisper_token eot = whisper_token_eot(ctx);
  word_buffer word = {0};
  for (int i = 0; i < count; i++) {
    napi_value segment, text, p;
    napi_create_object(env, &segment);
    parley_set_number(env, segment, "t0", (double)whisper_full_get_segment_t0(ctx, i) * 10);
    parley_set_number(env, segment, "t1", (double)whisper_full_get_segment_t1(ctx, i) * 10);
    napi_create_string_utf8(env, whisper_full_get_segment_text(ctx, i), NAPI_AUTO_LENGTH, &text);
    napi_set_named_property(env, segment, "text", text);
    double sum = 0;
    int words = 0;
    for (int t = 0, n = whisper_full_n_tokens(ctx, i); t < n; t++) {
      if (whisper_full_get_token_id(ctx, i, t) >= eot) continue;  // timestamps and special tokens
      sum += whisper_full_get_token_p(ctx, i, t);
      words++;
    }
    if (words > 0) napi_create_double(env, sum / words, &p);
    else napi_get_null(env, &p);
    napi_set_named_property(env, segment, "p", p);
    napi_set_named_property(env, segment, "words", words_value(env, ctx, i, &word));
    napi_set_element(env, segments, i, segment);
  }
  free(word.text);
  napi_set_named_property(env, result, "segments", segments);
  napi_create_string_utf8(env, whisper_lang_str(whisper_full_lang_id(ctx)), NAPI_AUTO_LENGTH, &language);
  napi_set_named_property(env, result, "language", language);
  return result;
}

static void transcribe_complete(napi_env env, napi_status status, void *data) {
  transcribe_job *job = data;
  if (status == napi_ok && job->result == 0) {
    napi_resolve_deferred(env, job->deferred, transcription_value(env, job->ctx));
  } else {
    const char *reason = atomic_load(&job->flag->stopped) ? "whisper.cpp transcription stopped" : "whisper.cpp failed to transcribe the audio";
    napi_reject_deferred(env, job->deferred, parley_error_value(env, reason));
  }
  napi_delete_reference(env, job->context_ref);
  napi_delete_async_work(env, job->work);
  parley_release_flag(job->flag);
  free(job->prompt);
  free(job->pcm);
  free(job);
}

static double number_option(napi_env env, napi_value options, const char *key) {
  napi_value v;
  double out = 0;
  napi_get_named_property(env, options, key, &v);
  napi_get_value_double(env, v, &out);
  return out;
}

/** A copy of a string option (freed by the caller), or NULL when it is absent or empty. */
static char *string_option(napi_env env, napi_value options, const char *key) {
  napi_value v;
  napi_valuetype type;
  size_t length = 0;
  if (napi_get_named_property(env, options, key, &v) != napi_ok || napi_typeof(env, v, &type) != napi_ok || type != napi_string) return NULL;
  napi_get_value_string_utf8(env, v, NULL, 0, &length);
  if (length == 0) return NULL;
  char *out = malloc(length + 1);
  napi_get_value_string_utf8(env, v, out, length + 1, &length);
  return out;
}

static napi_value transcribe(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], promise, name, language, handle, stop_fn;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  transcribe_job *job = calloc(1, sizeof *job);
  CHECK(env, napi_get_value_external(env, argv[0], (void **)&job->ctx));
  CHECK(env, napi_create_reference(env, argv[0], 1, &job->context_ref));

  napi_typedarray_type type;
  size_t length;
  void *samples;
  CHECK(env, napi_get_typedarray_info(env, argv[1], &type, &length, &samples, NULL, NULL));
  if (type != napi_float32_array) {
    napi_throw_type_error(env, NULL, "parley-whisper: pcm must be a Float32Array");
    return NULL;
  }
  // A copy: the worker must not read memory the JavaScript side may reuse.
  job->pcm = malloc(length * sizeof(float) + 1);
  memcpy(job->pcm, samples, length * sizeof(float));
  job->samples = (int)length;

  CHECK(env, napi_get_named_property(env, argv[2], "language", &language));
  CHECK(env, napi_get_value_string_utf8(env, language, job->language, sizeof job->language, NULL));
  job->threads = (int)number_option(env, argv[2], "threads");
  job->best_of = (int)number_option(env, argv[2], "bestOf");
  job->temperature = (float)number_option(env, argv[2], "temperature");
  job->temperature_inc = (float)number_option(env, argv[2], "temperatureInc");
  job->prompt = string_option(env, argv[2], "prompt");

  CHECK(env, parley_stop_handle(env, &job->flag, &stop_fn));

  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "parley-whisper.transcribe", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, transcribe_execute, transcribe_complete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));

  CHECK(env, napi_create_object(env, &handle));
  CHECK(env, napi_set_named_property(env, handle, "promise", promise));
  CHECK(env, napi_set_named_property(env, handle, "stop", stop_fn));
  return handle;
}

// ---- tokenCount(context, text): number ---------------------------------------------------

/** How many tokens the model's own tokenizer makes of `text`: what an initial prompt costs of its budget. */
static napi_value token_count(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], out;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  struct whisper_context *ctx;
  CHECK(env, napi_get_value_external(env, argv[0], (void **)&ctx));
  size_t length;
  CHECK(env, napi_get_value_string_utf8(env, argv[1], NULL, 0, &length));
  char *text = malloc(length + 1);
  CHECK(env, napi_get_value_string_utf8(env, argv[1], text, length + 1, &length));
  // Reads the vocabulary only, which no transcription changes: safe beside a running one.
  int count = whisper_token_count(ctx, text);
  free(text);
  CHECK(env, napi_create_int32(env, count, &out));
  return out;
}

// ---- module ------------------------------------------------------------------------------

static napi_value system_info(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value text;
  CHECK(env, napi_create_string_utf8(env, whisper_print_system_info(), NAPI_AUTO_LENGTH, &text));
  return text;
}

static napi_value init(napi_env env, napi_value exports) {
  whisper_log_set(parley_silent, NULL);
  napi_property_descriptor methods[] = {
      {"load", NULL, load, NULL, NULL, NULL, napi_default, NULL},
      {"transcribe", NULL, transcribe, NULL, NULL, NULL, napi_default, NULL},
      {"tokenCount", NULL, token_count, NULL, NULL, NULL, napi_default, NULL},
      {"systemInfo", NULL, system_info, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(env, napi_define_properties(env, exports, sizeof methods / sizeof *methods, methods));
  CHECK(env, parley_parakeet_register(env, exports, on_whisper_thread));  // same thread: one OpenMP master
  return exports;
}

NAPI_MODULE(parley_whisper, init)
