/**
 * Wakes the open live streams of a transcription when its job committed new segments. In
 * process only: the segments themselves are in the database, so a stream that misses a wake
 * (or a client that reconnects) reads them from there.
 */
const listeners = new Map<string, Set<() => void>>();

export function onLiveSegments(transcriptionId: string, listener: () => void): () => void {
  let set = listeners.get(transcriptionId);
  if (!set) listeners.set(transcriptionId, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) listeners.delete(transcriptionId);
  };
}

export function liveSegmentsCommitted(transcriptionId: string): void {
  for (const l of listeners.get(transcriptionId) ?? []) l();
}
