/**
 * Keeps the in-place sealing of a plaintext object (decision 107) apart from everything
 * else done to that object in this process. A read that found the object plaintext must
 * open it before a rewrite renames the sealed copy over it, or it would serve ciphertext as
 * audio; a write or a removal must not be undone by a rewrite that read the object before.
 * So users of a key (or of a prefix) wait for a rewrite of it in progress, and a rewrite
 * never starts while the key is in use: it reports the key busy and is tried again later.
 * In-process only: the sealing runs in the server, which does every read and write.
 */
export class RewriteGate {
  private readonly users = new Map<string, number>();
  private readonly rewrites = new Map<string, Promise<void>>();

  /** Runs `fn` as a user of every key starting with `prefix` (a key is its own prefix). */
  async use<T>(prefix: string, fn: () => Promise<T>): Promise<T> {
    for (let busy = this.rewritingUnder(prefix); busy; busy = this.rewritingUnder(prefix)) await busy;
    this.users.set(prefix, (this.users.get(prefix) ?? 0) + 1); // no await since the check: no rewrite can have started
    try {
      return await fn();
    } finally {
      const left = this.users.get(prefix)! - 1;
      if (left) this.users.set(prefix, left);
      else this.users.delete(prefix);
    }
  }

  /** Runs `fn` as the only user of `key`, or returns null at once when the key is in use. */
  async rewrite<T>(key: string, fn: () => Promise<T>): Promise<T | null> {
    if (this.rewrites.has(key) || [...this.users.keys()].some((prefix) => key.startsWith(prefix))) return null;
    let finished!: () => void;
    this.rewrites.set(key, new Promise<void>((resolve) => (finished = resolve)));
    try {
      return await fn();
    } finally {
      this.rewrites.delete(key);
      finished();
    }
  }

  private rewritingUnder(prefix: string): Promise<void> | undefined {
    for (const [key, done] of this.rewrites) if (key.startsWith(prefix)) return done;
    return undefined;
  }
}
