// Parley's Parakeet binding: load a ggml Parakeet TDT model and transcribe 16 kHz mono float
// PCM off the event loop into tokens with their times (from the TDT durations) and
// probabilities; stop a running transcription. Compiled into the whisper addon from the same
// whisper.cpp sources and flags, and run on the addon's one engine thread (decision 181).
#include "napi-shared.h"
#include "parley-parakeet.h"

#include <ggml-backend.h>
#include <parakeet.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static parley_on_engine_thread on_engine_thread;

static void free_context(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  parakeet_free((struct parakeet_context *)data);
}

// ---- parakeetLoad(path, gpu): Promise<context> ------------------------------------------

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char *path;
  bool gpu;
  struct parakeet_context *ctx;
} load_job;

static void load_on_engine_thread(void *data) {
  load_job *job = data;
  struct parakeet_context_params params = parakeet_context_default_params();
  // With a GPU build (scripts/native-whisper.ts --cuda) parakeet.cpp puts the model on GPU 0;
  // a CPU build sees no GPU and parakeet.cpp stays on the CPU (decision 199).
  params.use_gpu = job->gpu;
  job->ctx = parakeet_init_from_file_with_params(job->path, params);
}

static void load_execute(napi_env env, void *data) {
  (void)env;
  on_engine_thread(load_on_engine_thread, data);
}

static void load_complete(napi_env env, napi_status status, void *data) {
  load_job *job = data;
  if (status == napi_ok && job->ctx) {
    napi_value handle;
    napi_create_external(env, job->ctx, free_context, NULL, &handle);
    napi_resolve_deferred(env, job->deferred, handle);
  } else {
    napi_reject_deferred(env, job->deferred, parley_error_value(env, "whisper.cpp could not load the Parakeet model file"));
  }
  napi_delete_async_work(env, job->work);
  free(job->path);
  free(job);
}

static napi_value load(napi_env env, napi_callback_info info) {
  size_t argc = 2, length;
  napi_value argv[2], promise, name;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  CHECK(env, napi_get_value_string_utf8(env, argv[0], NULL, 0, &length));
  load_job *job = calloc(1, sizeof *job);
  job->path = malloc(length + 1);
  CHECK(env, napi_get_value_string_utf8(env, argv[0], job->path, length + 1, &length));
  if (argc > 1) CHECK(env, napi_get_value_bool(env, argv[1], &job->gpu));
  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "parley-parakeet.load", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, load_execute, load_complete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));
  return promise;
}

// ---- parakeetTranscribe(context, pcm, { threads }): { promise, stop() } ------------------

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref context_ref;  // keeps the model alive while the engine thread uses it
  struct parakeet_context *ctx;
  float *pcm;
  int samples, threads, result;
  stop_flag *flag;
} transcribe_job;

static void transcribe_on_engine_thread(void *data) {
  transcribe_job *job = data;
  struct parakeet_full_params params = parakeet_full_default_params(PARAKEET_SAMPLING_GREEDY);
  params.n_threads = job->threads;
  params.no_context = true;  // each recording on its own: no tokens or LSTM state from the last one
  params.abort_callback = parley_should_abort;
  params.abort_callback_user_data = job->flag;
  job->result = parakeet_full(job->ctx, params, job->pcm, job->samples);
}

static void transcribe_execute(napi_env env, void *data) {
  (void)env;
  on_engine_thread(transcribe_on_engine_thread, data);
}

/**
 * Every token of every segment, times in ms (parakeet.cpp counts 10 ms mel frames) with its
 * probability and whether it starts a word; `text` is the piece as text (a word's first
 * piece with its leading space). Segments and words are made in TypeScript.
 */
static napi_value tokens_value(napi_env env, struct parakeet_context *ctx) {
  napi_value tokens;
  napi_create_array(env, &tokens);
  uint32_t at = 0;
  char piece[256];
  for (int s = 0, segments = parakeet_full_n_segments(ctx); s < segments; s++) {
    for (int t = 0, n = parakeet_full_n_tokens(ctx, s); t < n; t++) {
      parakeet_token_data data = parakeet_full_get_token_data(ctx, s, t);
      const char *raw = parakeet_token_to_str(ctx, data.id);
      parakeet_token_to_text(raw ? raw : "", false, piece, sizeof piece);
      napi_value token, text, word_start;
      napi_create_object(env, &token);
      napi_create_string_utf8(env, piece, NAPI_AUTO_LENGTH, &text);
      napi_set_named_property(env, token, "text", text);
      parley_set_number(env, token, "t0", (double)data.t0 * 10);
      parley_set_number(env, token, "t1", (double)data.t1 * 10);
      parley_set_number(env, token, "p", data.p);
      napi_get_boolean(env, data.is_word_start, &word_start);
      napi_set_named_property(env, token, "wordStart", word_start);
      napi_set_element(env, tokens, at++, token);
    }
  }
  return tokens;
}

static void transcribe_complete(napi_env env, napi_status status, void *data) {
  transcribe_job *job = data;
  if (status == napi_ok && job->result == 0) {
    napi_resolve_deferred(env, job->deferred, tokens_value(env, job->ctx));
  } else {
    const char *reason = atomic_load(&job->flag->stopped) ? "Parakeet transcription stopped" : "Parakeet failed to transcribe the audio";
    napi_reject_deferred(env, job->deferred, parley_error_value(env, reason));
  }
  napi_delete_reference(env, job->context_ref);
  napi_delete_async_work(env, job->work);
  parley_release_flag(job->flag);
  free(job->pcm);
  free(job);
}

static napi_value transcribe(napi_env env, napi_callback_info info) {
  size_t argc = 3, length;
  napi_value argv[3], promise, name, handle, stop_fn, threads;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_typedarray_type type;
  void *samples;
  CHECK(env, napi_get_typedarray_info(env, argv[1], &type, &length, &samples, NULL, NULL));
  if (type != napi_float32_array) {
    napi_throw_type_error(env, NULL, "parley-parakeet: pcm must be a Float32Array");
    return NULL;
  }
  transcribe_job *job = calloc(1, sizeof *job);
  CHECK(env, napi_get_value_external(env, argv[0], (void **)&job->ctx));
  CHECK(env, napi_create_reference(env, argv[0], 1, &job->context_ref));
  // A copy: the engine thread must not read memory the JavaScript side may reuse.
  job->pcm = malloc(length * sizeof(float) + 1);
  memcpy(job->pcm, samples, length * sizeof(float));
  job->samples = (int)length;
  CHECK(env, napi_get_named_property(env, argv[2], "threads", &threads));
  CHECK(env, napi_get_value_int32(env, threads, &job->threads));

  CHECK(env, parley_stop_handle(env, &job->flag, &stop_fn));

  CHECK(env, napi_create_promise(env, &job->deferred, &promise));
  CHECK(env, napi_create_string_utf8(env, "parley-parakeet.transcribe", NAPI_AUTO_LENGTH, &name));
  CHECK(env, napi_create_async_work(env, NULL, name, transcribe_execute, transcribe_complete, job, &job->work));
  CHECK(env, napi_queue_async_work(env, job->work));

  CHECK(env, napi_create_object(env, &handle));
  CHECK(env, napi_set_named_property(env, handle, "promise", promise));
  CHECK(env, napi_set_named_property(env, handle, "stop", stop_fn));
  return handle;
}

// ---- parakeetGpuDevice(): string | null --------------------------------------------------

/** The GPU parakeet.cpp takes when asked to (the first GPU ggml lists), or null: a CPU build lists none. */
static napi_value gpu_device(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    enum ggml_backend_dev_type type = ggml_backend_dev_type(dev);
    if (type == GGML_BACKEND_DEVICE_TYPE_GPU || type == GGML_BACKEND_DEVICE_TYPE_IGPU) {
      CHECK(env, napi_create_string_utf8(env, ggml_backend_dev_name(dev), NAPI_AUTO_LENGTH, &result));
      return result;
    }
  }
  CHECK(env, napi_get_null(env, &result));
  return result;
}

// ---- registration ------------------------------------------------------------------------

napi_status parley_parakeet_register(napi_env env, napi_value exports, parley_on_engine_thread on_thread) {
  on_engine_thread = on_thread;
  parakeet_log_set(parley_silent, NULL);
  napi_property_descriptor methods[] = {
      {"parakeetLoad", NULL, load, NULL, NULL, NULL, napi_default, NULL},
      {"parakeetTranscribe", NULL, transcribe, NULL, NULL, NULL, napi_default, NULL},
      {"parakeetGpuDevice", NULL, gpu_device, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof methods / sizeof *methods, methods);
}
