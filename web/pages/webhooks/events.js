// The event types an endpoint can subscribe to: spec 6, as src/events/outbox.ts lists them
// (test/web/webhook-events.test.ts keeps the two lists equal).
export const EVENTS = [
  "recording.created",
  "recording.uploaded",
  "recording.deleted",
  "transcription.started",
  "transcription.completed",
  "transcription.failed",
  "summary.started",
  "summary.completed",
  "summary.failed",
  "device.low_battery",
  "device.offline",
];
