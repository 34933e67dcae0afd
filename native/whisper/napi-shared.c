// See napi-shared.h.
#include "napi-shared.h"

#include <stdlib.h>

void parley_silent(enum ggml_log_level level, const char *text, void *user_data) {
  (void)level, (void)text, (void)user_data;
}

napi_value parley_error_value(napi_env env, const char *message) {
  napi_value text, error;
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, NULL, text, &error);
  return error;
}

void parley_set_number(napi_env env, napi_value object, const char *key, double value) {
  napi_value v;
  napi_create_double(env, value, &v);
  napi_set_named_property(env, object, key, v);
}

void parley_release_flag(stop_flag *flag) {
  if (--flag->owners == 0) free(flag);
}

static void flag_finalize(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  parley_release_flag(data);
}

bool parley_should_abort(void *flag) { return atomic_load(&((stop_flag *)flag)->stopped); }

static napi_value stop(napi_env env, napi_callback_info info) {
  void *flag;
  CHECK(env, napi_get_cb_info(env, info, NULL, NULL, NULL, &flag));
  atomic_store(&((stop_flag *)flag)->stopped, true);
  return NULL;
}

napi_status parley_stop_handle(napi_env env, stop_flag **flag, napi_value *stop_fn) {
  *flag = calloc(1, sizeof **flag);
  (*flag)->owners = 2;
  napi_status status = napi_create_function(env, "stop", NAPI_AUTO_LENGTH, stop, *flag, stop_fn);
  return status == napi_ok ? napi_add_finalizer(env, *stop_fn, *flag, flag_finalize, NULL, NULL) : status;
}
