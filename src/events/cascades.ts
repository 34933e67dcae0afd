import type { Tenant } from "../tenancy";

/**
 * Changes in a lower module that a higher module's rows follow, in the same transaction
 * (decision 083). The lower module fires a cascade; the higher one registers its handler
 * at boot, so the lower never imports the higher. Handlers run synchronously, inside the
 * caller's transaction, through the Deps they were registered with; a throw rolls it all back.
 */
export type CascadeEvents = {
  /** Recordings: a recording is being deleted; its content's copies elsewhere go (decision 078). */
  recordingErased: { tenant: Tenant; recording: { id: string; created_at: string; end_user_id: string | null; device_id: string | null }; now: Date };
  /** Devices: a device's binding ends (unbind, end-user deletion, device deletion, an executed factory reset). */
  bindingEnded: { tenant: Tenant; deviceId: string; now: Date };
  /** Devices: a device is being deleted (after its binding ended). */
  deviceDeleted: { tenant: Tenant; deviceId: string; now: Date };
  /** End users: an end user is being deleted and becomes read-only. */
  endUserDeleted: { tenant: Tenant; endUserId: string; now: Date };
  /**
   * Projects: a project is being deleted (decision 107), both modes; its recordings are erased
   * by their module before the project's row goes, audited as `actor` (the operator at the CLI).
   * Handlers add what they erased to `erased`.
   */
  projectDeleted: { projectId: string; actor: { type: string; id: string | null }; now: Date; erased: Record<string, number> };
};

export type CascadeName = keyof CascadeEvents;
export type CascadeHandler<N extends CascadeName> = (event: CascadeEvents[N]) => void;

/** One Deps' cascade hooks: handlers by cascade, each tagged with the module that registered it. */
export class Cascades {
  private readonly handlers: { [N in CascadeName]: { module: string; run: CascadeHandler<N> }[] } = {
    recordingErased: [],
    bindingEnded: [],
    deviceDeleted: [],
    endUserDeleted: [],
    projectDeleted: [],
  };

  /** Registers `module`'s handler; called once per Deps, by buildDeps. */
  on<N extends CascadeName>(name: N, module: string, run: CascadeHandler<N>): void {
    this.handlers[name].push({ module, run } as never);
  }

  /**
   * Runs every handler of `name` in registration order; call inside the causing transaction.
   * Each cascade has a module that follows it, so none registered is a wiring fault: it
   * throws, and the transaction rolls back, rather than leave the higher module's rows behind.
   */
  fire<N extends CascadeName>(name: N, event: CascadeEvents[N]): void {
    const handlers = this.handlers[name];
    if (handlers.length === 0) throw new Error(`cascade ${name} has no handler: buildDeps registers every cascade`);
    for (const handler of handlers) (handler.run as CascadeHandler<N>)(event);
  }

  /** The modules registered on each cascade, for the wiring check. */
  registered(): Record<CascadeName, string[]> {
    const out = {} as Record<CascadeName, string[]>;
    for (const name of Object.keys(this.handlers) as CascadeName[]) out[name] = this.handlers[name].map((h) => h.module);
    return out;
  }
}
