// What Parley's two bindings (addon.c for whisper, parakeet.c for Parakeet) share: N-API error
// handling, the quiet log callback, and the stop flag a running transcription checks.
#ifndef PARLEY_NAPI_SHARED_H
#define PARLEY_NAPI_SHARED_H
#include <ggml.h>
#include <node_api.h>
#include <stdatomic.h>
#include <stdbool.h>

#define CHECK(env, call)                                                  \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error((env), NULL, "parley: N-API call failed: " #call); \
      return NULL;                                                        \
    }                                                                     \
  } while (0)

/** whisper.cpp, Parakeet and ggml print to stderr unless given a callback; the server logs JSON lines only. */
void parley_silent(enum ggml_log_level level, const char *text, void *user_data);

napi_value parley_error_value(napi_env env, const char *message);

void parley_set_number(napi_env env, napi_value object, const char *key, double value);

/**
 * Set by a transcription's stop() on the main thread, read by the engine's abort callback on
 * the engine thread; freed by whichever of the job's completion and stop()'s finalizer comes
 * last (both on the main thread).
 */
typedef struct {
  atomic_bool stopped;
  int owners;
} stop_flag;

/** A new flag and the stop() function that sets it (the function's finalizer is one owner, the job the other). */
napi_status parley_stop_handle(napi_env env, stop_flag **flag, napi_value *stop_fn);

/** The job's side of the flag, at its completion. */
void parley_release_flag(stop_flag *flag);

/** The engines' abort callback: true once stop() was called. */
bool parley_should_abort(void *flag);

#endif
