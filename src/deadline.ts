/**
 * Waits for `work` at most `ms` (Infinity: as long as it takes): true when it settled in
 * time, fulfilled or rejected, false when the time ran out first.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  // setTimeout would clamp Infinity to 1 ms.
  if (!Number.isFinite(ms)) return settled;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([settled, timeUp]);
  } finally {
    clearTimeout(timer);
  }
}
