import { createHash } from "node:crypto";
import type { ApiClient } from "./client";
import { oggOpusSeconds, pickSample, readSample, type SpeechSample } from "./samples";
import { type StreamPace, streamRecording } from "./stream";

export type Channel = "wifi" | "cellular" | "bluetooth";

/** Counters the run prints; shared by every simulated device. */
export type SimStats = {
  heartbeats: number;
  heartbeatErrors: number;
  commandsExecuted: number;
  commandsFailed: number;
  resets: number;
  otaApplied: number;
  otaFailed: number;
  recordingsUploaded: number;
  /** Chunks of streaming recordings the server acknowledged. */
  chunksStreamed: number;
  uploadErrors: number;
  /** The most recent failure, for the operator watching a run. */
  lastError: string | null;
};

export function emptyStats(): SimStats {
  return {
    heartbeats: 0,
    heartbeatErrors: 0,
    commandsExecuted: 0,
    commandsFailed: 0,
    resets: 0,
    otaApplied: 0,
    otaFailed: 0,
    recordingsUploaded: 0,
    chunksStreamed: 0,
    uploadErrors: 0,
    lastError: null,
  };
}

type CommandResult = { command_id: string; status: "executed" | "failed"; result?: Record<string, unknown>; error?: { code: string; message: string } };
type OtaStatus = { ota_id: string; status: "downloading" | "installing" | "applied" | "failed"; progress_percent?: number; error_message?: string };
/** A recording in progress; a streaming one is uploading as it records, and `stop` ends it. */
type Recording = { startedAt: Date; initiatedBy: "local" | "remote"; ticksLeft: number; uploadAfterStop: boolean; stop?: AbortController };

/**
 * One wearable: heartbeats over its channel, acts on the commands the responses carry,
 * records now and then, uploads its recordings, and installs firmware it is assigned.
 */
export class SimulatedDevice {
  private battery = 60 + Math.floor(Math.random() * 40);
  private storageUsed = Math.floor(Math.random() * 200);
  private recording: Recording | null = null;
  private pendingUploads: { startedAt: Date }[] = [];
  private uploads = 0;
  private recordedAtOnce = false;
  private streams = new Set<Promise<void>>();
  private results: CommandResult[] = [];
  private ota: { id: string; stage: "download" | "install" | "report"; version: string; outcome: OtaStatus | null } | null = null;
  private firmware = "1.0.0";
  stopped = false;

  constructor(
    private readonly api: ApiClient,
    readonly id: string,
    private token: string,
    readonly channel: Channel,
    private readonly stats: SimStats,
    private readonly options: {
      uploads: boolean;
      seed: number;
      recordAtOnce?: boolean;
      stream?: StreamPace;
      /** Told of each recording as it starts streaming (the demo prints where to watch it). */
      onStream?: (recordingId: string, sample: SpeechSample, seconds: number) => void;
    },
  ) {}

  private recordingState() {
    const flags =
      (this.battery < 20 ? 0x02 : 0) |
      (this.channel === "wifi" ? 0x08 : 0) |
      (this.channel === "cellular" ? 0x10 : 0) |
      (this.pendingUploads.length ? 0x20 : 0);
    return {
      device_state: this.recording ? "recording" : this.pendingUploads.length ? "syncing" : "idle",
      ...(this.recording ? { started_at: this.recording.startedAt.toISOString(), initiated_by: this.recording.initiatedBy } : {}),
      pending_recordings: this.pendingUploads.length,
      flags,
      connection_type: this.channel === "bluetooth" ? ["bluetooth"] : [this.channel],
      wifi_status: this.channel === "wifi" ? "connected" : "off",
      lte_status: this.channel === "cellular" ? "connected" : "off",
    };
  }

  /** One heartbeat and everything it leads to. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    this.simulateTime();
    const otaStatus = this.ota?.outcome ?? undefined;
    const r = await this.api.call("POST", `/v1/devices/${this.id}/heartbeat`, this.token, {
      battery_percent: this.battery,
      storage_used_mb: this.storageUsed,
      storage_total_mb: 4096,
      signal_strength_dbm: -50 - Math.floor(Math.random() * 40),
      firmware_version: this.firmware,
      recording_state: this.recordingState(),
      channel: this.channel,
      command_results: this.results,
      ...(otaStatus ? { ota_status: otaStatus } : {}),
    });
    if (r.status !== 200) {
      this.stats.heartbeatErrors++;
      if (r.status === 401) this.stopped = true; // unbound or deleted: a real device would wait to be re-paired
      return;
    }
    this.stats.heartbeats++;
    this.results = [];
    if (otaStatus && (otaStatus.status === "applied" || otaStatus.status === "failed")) this.ota = null;
    for (const cmd of r.body.commands) await this.execute(cmd);
    if (r.body.ota) await this.advanceOta(r.body.ota);
    if (this.options.uploads) await this.uploadPending();
  }

  /** Battery, storage and the odd button press between heartbeats. */
  private simulateTime(): void {
    this.battery = Math.max(0, this.battery - (this.recording ? 2 : Math.random() < 0.3 ? 1 : 0));
    if (this.battery < 10) this.battery = 100; // put on the charger
    if (this.recording) {
      this.storageUsed += 1;
      // A streaming recording lasts as long as its conversation (or until a stop command).
      if (!this.recording.stop && --this.recording.ticksLeft <= 0) this.stopRecording();
    } else if (this.options.recordAtOnce && !this.recordedAtOnce) {
      // A demo's first conversation comes at once, so the audience need not wait for a button press.
      this.recordedAtOnce = true;
      this.startRecording("local", 1, true);
    } else if (Math.random() < 0.03) {
      this.startRecording("local", 2 + Math.floor(Math.random() * 3), true);
    }
  }

  private startRecording(initiatedBy: Recording["initiatedBy"], ticksLeft: number, uploadAfterStop: boolean): void {
    const recording: Recording = { startedAt: new Date(), initiatedBy, ticksLeft, uploadAfterStop };
    this.recording = recording;
    const pace = this.options.uploads ? this.options.stream : undefined;
    if (!pace) return;
    // Streaming firmware uploads while it records: the conversation goes out chunk by chunk, at its own pace.
    recording.stop = new AbortController();
    const sample = pickSample(this.options.seed, this.uploads++);
    const streaming = this.stream(sample, recording, pace).finally(() => {
      if (this.recording === recording) this.recording = null;
      this.streams.delete(streaming);
    });
    this.streams.add(streaming);
  }

  /** Stops the recording in progress and waits until every stream has completed (or failed). */
  async finish(): Promise<void> {
    this.stopRecording();
    await Promise.all(this.streams);
  }

  private stopRecording(): void {
    if (!this.recording) return;
    if (this.recording.stop) this.recording.stop.abort();
    else if (this.recording.uploadAfterStop) this.pendingUploads.push({ startedAt: this.recording.startedAt });
    this.recording = null;
  }

  private async execute(cmd: { id: string; type: string; params: Record<string, unknown> | null; grant_token: string | null }): Promise<void> {
    const ok = (result: Record<string, unknown> = {}) => {
      this.results.push({ command_id: cmd.id, status: "executed", result });
      this.stats.commandsExecuted++;
    };
    const fail = (code: string, message: string) => {
      this.results.push({ command_id: cmd.id, status: "failed", error: { code, message } });
      this.stats.commandsFailed++;
    };
    switch (cmd.type) {
      case "start_recording":
        if (this.recording) return fail("already_recording", "A recording is in progress.");
        this.startRecording("remote", 1_000_000, cmd.params?.upload_after_stop !== false);
        return ok();
      case "stop_recording":
        if (!this.recording) return fail("not_recording", "No recording in progress.");
        this.stopRecording();
        return ok();
      case "trigger_upload":
        return ok({ queued: this.pendingUploads.length });
      case "factory_reset": {
        // Wipe first, then acknowledge with the completion credential: the device token is gone.
        const done = await this.api.call("POST", `/v1/devices/${this.id}/commands/${cmd.id}/complete`, cmd.grant_token, {
          status: "executed",
          result: { wiped: true },
        });
        if (done.status === 200) this.stats.resets++;
        this.stopped = true;
        return;
      }
      default:
        return fail("unsupported", `Unknown command ${cmd.type}.`);
    }
  }

  /** Download and check the image, then report downloading -> installing -> applied over three heartbeats. */
  private async advanceOta(ota: { id: string; firmware: { version: string; sha256: string; download_path: string } }): Promise<void> {
    if (this.ota && this.ota.id !== ota.id) this.ota = null;
    if (!this.ota) {
      const res = await fetch(`${this.api.baseUrl}${ota.firmware.download_path}`, { headers: { authorization: `Bearer ${this.token}` } });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const good = res.ok && createHash("sha256").update(bytes).digest("hex") === ota.firmware.sha256;
      this.ota = {
        id: ota.id,
        stage: "install",
        version: ota.firmware.version,
        outcome: good
          ? { ota_id: ota.id, status: "downloading", progress_percent: 100 }
          : { ota_id: ota.id, status: "failed", error_message: "image checksum mismatch" },
      };
      if (!good) this.stats.otaFailed++;
      return;
    }
    if (this.ota.stage === "install") {
      this.ota = { ...this.ota, stage: "report", outcome: { ota_id: ota.id, status: "installing" } };
    } else if (this.ota.stage === "report") {
      this.firmware = this.ota.version;
      this.ota = { ...this.ota, outcome: { ota_id: ota.id, status: "applied" } };
      this.stats.otaApplied++;
    }
  }

  /**
   * Uploads finished recordings the way firmware does: create, upload URL, PUT, complete (425 = verifying, retry).
   * The audio is one of the spoken sample conversations, so an appliance with models shows real transcripts.
   */
  private async uploadPending(): Promise<void> {
    const next = this.pendingUploads.shift();
    if (!next) return;
    try {
      const sample = pickSample(this.options.seed, this.uploads++);
      const audio = await readSample(sample);
      const rec = await this.api.must("POST", "/v1/recordings", this.token, this.newRecording(sample, next.startedAt));
      const target = await this.api.must("POST", `/v1/recordings/${rec.id}/upload-url`, this.token, {
        content_type: sample.mimeType,
        file_size_bytes: audio.length,
      });
      const put = await fetch(target.upload_url, { method: "PUT", headers: target.headers, body: audio });
      if (!put.ok) throw new Error(`PUT answered ${put.status}`);
      const sha256 = createHash("sha256").update(audio).digest("hex");
      for (let i = 0; i < 50; i++) {
        const done = await this.api.call("POST", `/v1/recordings/${rec.id}/upload-complete`, this.token, { sha256, file_size_bytes: audio.length });
        if (done.status === 200) {
          this.stats.recordingsUploaded++;
          return;
        }
        if (done.status !== 425) throw new Error(`upload-complete answered ${done.status}`);
        await Bun.sleep(100);
      }
      throw new Error("upload verification never finished");
    } catch (err) {
      this.uploadFailed(err);
    }
  }

  /** Streams one conversation while it is recorded, then completes it (see streamRecording). */
  private async stream(sample: SpeechSample, recording: Recording, pace: StreamPace): Promise<void> {
    try {
      const audio = await readSample(sample);
      const seconds = oggOpusSeconds(audio);
      await streamRecording(this.api, this.token, audio, seconds, this.newRecording(sample, recording.startedAt), pace, {
        stop: recording.stop?.signal,
        onCreated: (id) => this.options.onStream?.(id, sample, seconds),
        onChunk: () => void this.stats.chunksStreamed++,
      });
      this.stats.recordingsUploaded++;
    } catch (err) {
      this.uploadFailed(err);
    }
  }

  /** The body of POST /recordings for a sample recorded at `startedAt`. */
  private newRecording(sample: SpeechSample, startedAt: Date) {
    return {
      recorded_at: startedAt.toISOString(),
      mime_type: sample.mimeType,
      source: "device",
      upload_method: this.channel === "wifi" ? "wifi_direct" : this.channel === "cellular" ? "4g_direct" : "ble",
      name: `${sample.name} ${startedAt.toISOString().slice(0, 16).replace("T", " ")}`,
    };
  }

  private uploadFailed(err: unknown): void {
    this.stats.uploadErrors++;
    this.stats.lastError = String(err);
  }
}
