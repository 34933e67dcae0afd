import { dlopen, FFIType } from "bun:ffi";

/**
 * Tells libgomp (the OpenMP runtime whisper.cpp's CPU builds link) to put an idle thread to
 * sleep after a short spin, as it does by itself when it has more threads than cores.
 * Its default spins each idle thread about 300,000 times between parallel regions: on a box
 * whose cores other work also uses (a second model, live streams, the operator's own jobs)
 * those spinning threads take the cores the working threads need, and a transcription ran
 * 3-5x slower (decision 201). libgomp reads its settings once, when the first library that
 * links it loads, from the process's C environment, which Bun's process.env does not write:
 * so setenv(3), before each require() of such a library. An operator's own GOMP_SPINCOUNT or
 * OMP_WAIT_POLICY is kept. Outside glibc Linux (macOS builds have no OpenMP) it does nothing.
 */
export function throttleOpenMpSpinning(): void {
  if (done || process.platform !== "linux") return;
  done = true;
  if (process.env.GOMP_SPINCOUNT !== undefined || process.env.OMP_WAIT_POLICY !== undefined) return;
  let libc: ReturnType<typeof openLibc> | undefined;
  try {
    libc = openLibc();
  } catch {
    return; // not glibc (musl): its OpenMP builds, if any, keep libgomp's default
  }
  libc.symbols.setenv(Buffer.from(`GOMP_SPINCOUNT\0`), Buffer.from(`${THROTTLED_SPIN_COUNT}\0`), 0);
  libc.close();
}

/** libgomp's own spin count for a process with more threads than cores. */
export const THROTTLED_SPIN_COUNT = 1000;

let done = false;

function openLibc() {
  return dlopen("libc.so.6", { setenv: { args: [FFIType.ptr, FFIType.ptr, FFIType.i32], returns: FFIType.i32 } });
}
