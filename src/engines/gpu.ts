import { existsSync, readdirSync } from "node:fs";

export type GpuSetting = "auto" | "off" | "cuda" | "vulkan";
export type GpuBackend = "cuda" | "vulkan";

/** GPUs the machine exposes, by device node: cheap, no driver calls, safe at boot. */
export function detectGpus(): { cuda: boolean; vulkan: boolean } {
  const cuda = existsSync("/dev/nvidia0") || existsSync("/proc/driver/nvidia/version");
  let vulkan = false;
  try {
    vulkan = readdirSync("/dev/dri").some((d) => d.startsWith("renderD"));
  } catch {}
  return { cuda, vulkan };
}

/** The GPU backends to try, best first, for a PARLEY_GPU setting; empty means CPU only. */
export function gpuCandidates(setting: GpuSetting, gpus = detectGpus()): GpuBackend[] {
  if (setting === "off") return [];
  if (setting !== "auto") return [setting];
  return (["cuda", "vulkan"] as const).filter((b) => gpus[b]);
}
