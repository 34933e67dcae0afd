import { randomBytes } from "node:crypto";
import { parseFlags, UsageError } from "../cli/args";
import type { Config } from "../config";
import { ApiClient } from "./client";
import { type Channel, emptyStats, SimulatedDevice, type SimStats } from "./device";
import type { SpeechSample } from "./samples";
import { REAL_TIME, type StreamPace } from "./stream";

export type SimulationOptions = {
  url: string;
  apiKey: string;
  devices: number;
  /** Stop after this many seconds; 0 runs until stop() (Ctrl-C from the CLI). */
  durationSeconds: number;
  /** Base heartbeat interval over WiFi; cellular beats half as often, a Bluetooth relay a third (all under the 60 s admission window at the default). */
  intervalSeconds: number;
  uploads: boolean;
  /** Recordings stream while they are recorded, at this pace; without it each is uploaded whole after it stops. */
  stream?: StreamPace;
  /** Told of each recording as it starts streaming. */
  onStream?: (recordingId: string, sample: SpeechSample, seconds: number) => void;
  /** Each device records (and uploads) its first conversation on its first heartbeat: the demo's. */
  recordAtOnce?: boolean;
  log?: (line: string) => void;
  /**
   * A fixed name for this run (the demo's): the end users and devices of an earlier run of
   * that name are used again, found by external_id and serial number, instead of a new set
   * each time; a device still bound from then is bound afresh for a token. Without it, a
   * random name: every run is new (a load test wants that).
   */
  run?: string;
};

export type Simulation = { devices: SimulatedDevice[]; stats: SimStats; stop(): void; done: Promise<SimStats> };

const CHANNEL_FACTOR: Record<Channel, number> = { wifi: 1, cellular: 2, bluetooth: 3 };

// A fixed 60/25/15 mix of WiFi, cellular and Bluetooth relay, interleaved so small runs see every channel.
const CHANNEL_MIX = "wcwbwcwwbcwwcwbwcwww";

function pickChannel(i: number): Channel {
  const c = CHANNEL_MIX[i % CHANNEL_MIX.length];
  return c === "w" ? "wifi" : c === "c" ? "cellular" : "bluetooth";
}

/** Creates an end user and a device per wearable and binds them (API key), returning the device tokens. */
async function provision(
  api: ApiClient,
  apiKey: string,
  count: number,
  run: string,
  stats: SimStats,
  options: Pick<SimulationOptions, "uploads" | "recordAtOnce" | "run" | "stream" | "onStream">,
): Promise<SimulatedDevice[]> {
  const devices: SimulatedDevice[] = [];
  const earlier = async (path: string) => (options.run ? ((await api.must("GET", path, apiKey)).data[0] ?? null) : null);
  const one = async (i: number) => {
    const externalId = `sim-${run}-${i}`;
    const user =
      (await earlier(`/v1/end-users?external_id=${encodeURIComponent(externalId)}`)) ??
      (await api.must("POST", "/v1/end-users", apiKey, { external_id: externalId, name: `Simulated wearer ${i}` }));
    const channel = pickChannel(i);
    const capabilities = 0x01 | 0x02 | (channel === "cellular" ? 0x04 : 0);
    const serial = `SIM-${run}-${String(i).padStart(5, "0")}`;
    const device =
      (await earlier(`/v1/devices?serial_number=${encodeURIComponent(serial)}`)) ??
      (await api.must("POST", "/v1/devices", apiKey, {
        serial_number: serial,
        model: i % 3 === 0 ? "parley_note" : "parley_pin",
        name: `Simulator ${i}`,
        firmware_version: "1.0.0",
        capabilities,
        metadata: { simulator_run: run },
      }));
    // Its token went with the earlier run: only a new binding gives one.
    if (device.status === "bound") await api.must("POST", `/v1/devices/${device.id}/unbind`, apiKey);
    const bound = await api.must("POST", `/v1/devices/${device.id}/bind`, apiKey, { end_user_id: user.id });
    devices[i] = new SimulatedDevice(api, device.id, bound.device_token, channel, stats, {
      uploads: options.uploads,
      recordAtOnce: options.recordAtOnce,
      stream: options.stream,
      onStream: options.onStream,
      seed: i,
    });
  };
  for (let start = 0; start < count; start += 16) {
    await Promise.all(Array.from({ length: Math.min(16, count - start) }, (_, k) => one(start + k)));
  }
  return devices;
}

/** Runs N simulated wearables against a server until the duration ends or stop() is called. */
export async function startSimulation(options: SimulationOptions): Promise<Simulation> {
  const api = new ApiClient(options.url.replace(/\/$/, "").replace(/\/v1$/, ""));
  const stats = emptyStats();
  const run = options.run ?? randomBytes(4).toString("hex");
  const log = options.log ?? (() => {});
  const devices = await provision(api, options.apiKey, options.devices, run, stats, options);
  log(`simulator ${run}: ${devices.length} ${devices.length === 1 ? "device" : "devices"} bound`);
  let stopped = false;
  let wake: () => void = () => {};
  const stopSignal = new Promise<void>((resolve) => (wake = resolve));
  const sleep = (ms: number) => Promise.race([Bun.sleep(ms), stopSignal]);
  const deadline = options.durationSeconds > 0 ? Date.now() + options.durationSeconds * 1000 : Number.POSITIVE_INFINITY;
  const loop = async (device: SimulatedDevice) => {
    const base = options.intervalSeconds * 1000 * CHANNEL_FACTOR[device.channel];
    // A wearable reports as soon as it is bound (it is in touch with the phone app then);
    // after that first contact the devices' schedules are spread over one interval.
    let pause = Math.random() * base;
    while (!stopped && !device.stopped && Date.now() < deadline) {
      await device.tick().catch(() => void stats.heartbeatErrors++);
      await sleep(pause);
      pause = base * (0.8 + Math.random() * 0.4);
    }
    // A recording streaming when the run ends is stopped there and completed, not left half sent.
    await device.finish();
  };
  const timer = Number.isFinite(deadline) ? setTimeout(() => stop(), deadline - Date.now()) : null;
  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    wake();
  };
  const done = Promise.all(devices.map(loop)).then(() => {
    if (timer) clearTimeout(timer);
    return stats;
  });
  return { devices, stats, stop, done };
}

export function formatStats(s: SimStats): string {
  return `heartbeats ${s.heartbeats} (errors ${s.heartbeatErrors})  commands executed ${s.commandsExecuted} failed ${s.commandsFailed}  resets ${s.resets}  ota applied ${s.otaApplied} failed ${s.otaFailed}  recordings uploaded ${s.recordingsUploaded} (errors ${s.uploadErrors})  chunks streamed ${s.chunksStreamed}`;
}

const USAGE = `usage: parley simulate --devices N --api-key KEY [--url URL] [--duration SECONDS] [--interval SECONDS]
                       [--speed X | --no-stream | --no-uploads]
  N simulated wearables register, bind and heartbeat (WiFi, cellular or a Bluetooth relay), execute commands,
  install assigned firmware and upload recorded audio. --interval is the WiFi heartbeat period (default 15 s).
  Recordings stream in chunks while they are recorded, in real time (--speed 4: four times as fast), so the
  live transcript grows; --no-stream uploads each whole once it stops instead.
  The API key may also come from PARLEY_API_KEY. Without --duration it runs until Ctrl-C.`;

/** --speed and --no-stream, shared with `parley demo`: the pace recordings stream at, or none (whole-file uploads). */
export function streamFlag(values: { speed?: string; "no-stream"?: boolean }, usage: string): StreamPace | undefined {
  const speed = Number(values.speed ?? 1);
  if (!(speed > 0) || (values["no-stream"] && values.speed !== undefined)) throw new UsageError(usage);
  return values["no-stream"] ? undefined : { ...REAL_TIME, speed };
}

/** `parley simulate`: the demo driver and load generator; talks to a server over HTTP only. */
export async function simulateCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseFlags(args, {
    devices: { type: "string" },
    "api-key": { type: "string" },
    url: { type: "string" },
    duration: { type: "string" },
    interval: { type: "string" },
    "no-uploads": { type: "boolean" },
    speed: { type: "string" },
    "no-stream": { type: "boolean" },
  });
  const devices = Number(values.devices ?? 1);
  const duration = Number(values.duration ?? 0);
  const interval = Number(values.interval ?? 15);
  const apiKey = values["api-key"] ?? process.env.PARLEY_API_KEY;
  if (!apiKey || !Number.isInteger(devices) || devices < 1 || !(duration >= 0) || !(interval > 0)) throw new UsageError(USAGE);
  const stream = streamFlag(values, USAGE);
  const sim = await startSimulation({
    url: values.url ?? config.publicUrl,
    apiKey,
    devices,
    durationSeconds: duration,
    intervalSeconds: interval,
    uploads: !values["no-uploads"],
    stream,
    log: console.log,
  });
  process.once("SIGINT", () => sim.stop());
  const progress = setInterval(() => console.log(formatStats(sim.stats)), 10_000);
  const stats = await sim.done;
  clearInterval(progress);
  console.log(`done: ${formatStats(stats)}`);
}
