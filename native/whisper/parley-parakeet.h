// Parley's Parakeet binding (parakeet.c), registered on the whisper addon's exports by addon.c's init.
#ifndef PARLEY_PARAKEET_BINDING_H
#define PARLEY_PARAKEET_BINDING_H
#include <node_api.h>

/** How addon.c runs a call on its one engine thread (the process's one OpenMP master, decision 046). */
typedef void (*parley_on_engine_thread)(void (*run)(void *), void *arg);

/** Adds parakeetLoad, parakeetTranscribe and parakeetGpuDevice to `exports`. */
napi_status parley_parakeet_register(napi_env env, napi_value exports, parley_on_engine_thread on_engine_thread);

#endif
