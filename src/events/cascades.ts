import type { Tenant } from "../tenancy";

/**
 * Changes in a lower module that a higher module's rows follow, in the same transaction
 * (decision 083). The lower module fires a cascade; the higher one registers its handler
 * at boot, so the lower never imports the higher. Handlers run synchronously, inside the
 * caller's transaction, through the Deps they were registered with; a throw rolls it all back.
 */
export type CascadeEvents = {
  /**
   * Recordings: a recording is being erased (decision 078), whole or its audio alone
   * (retention, decision 103). Guards see both; handlers run for a whole erasure, whose
   * content's copies elsewhere go (recordings/erasure.ts lists what goes).
   */
  recordingErased: {
    tenant: Tenant;
    recording: { id: string; created_at: string; end_user_id: string | null; device_id: string | null };
    part: "whole" | "audio";
    now: Date;
  };
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

type Hooks = { [N in CascadeName]: { module: string; run: CascadeHandler<N> }[] };
const none = (): Hooks => ({ recordingErased: [], bindingEnded: [], deviceDeleted: [], endUserDeleted: [], projectDeleted: [] });

/**
 * One Deps' cascade hooks: handlers by cascade, each tagged with the module that registered
 * it, and guards: checks that may refuse the change (a legal hold, decision 133), asked by
 * check() before the change touches anything.
 */
export class Cascades {
  private readonly handlers: Hooks = none();
  private readonly guards: Hooks = none();
  /** The events check() let through: fire() refuses one that was not checked first. */
  private readonly checked = new WeakSet<object>();

  /** Registers `module`'s handler; called once per Deps, by buildDeps. */
  on<N extends CascadeName>(name: N, module: string, run: CascadeHandler<N>): void {
    this.handlers[name].push({ module, run } as never);
  }

  /** Registers `module`'s guard: it throws to refuse the change, and is asked before anything is touched. */
  guard<N extends CascadeName>(name: N, module: string, run: CascadeHandler<N>): void {
    this.guards[name].push({ module, run } as never);
  }

  /**
   * Asks every guard of `name` whether the change may happen: the first refusal throws.
   * Call it first, inside the causing transaction and before the change touches any row or
   * object; then make the change and fire() the same event object.
   */
  check<N extends CascadeName>(name: N, event: CascadeEvents[N]): void {
    for (const guard of this.guards[name]) (guard.run as CascadeHandler<N>)(event);
    this.checked.add(event);
  }

  /**
   * Runs every handler of `name` in registration order; call inside the causing transaction,
   * with the event check() let through (a cascade with guards fired unchecked is a wiring
   * fault and throws). Each cascade has a module that follows it, so none registered is a
   * wiring fault too: it throws, and the transaction rolls back, rather than leave the higher
   * module's rows behind.
   */
  fire<N extends CascadeName>(name: N, event: CascadeEvents[N]): void {
    if (this.guards[name].length > 0 && !this.checked.has(event))
      throw new Error(`cascade ${name} fired before its guards were asked: call check() before the change`);
    const handlers = this.handlers[name];
    if (handlers.length === 0) throw new Error(`cascade ${name} has no handler: buildDeps registers every cascade`);
    for (const handler of handlers) (handler.run as CascadeHandler<N>)(event);
  }

  /** The modules registered on each cascade (handlers, then guards as "module?"), for the wiring check. */
  registered(): Record<CascadeName, string[]> {
    const out = {} as Record<CascadeName, string[]>;
    for (const name of Object.keys(this.handlers) as CascadeName[]) {
      out[name] = [...this.handlers[name].map((h) => h.module), ...this.guards[name].map((g) => `${g.module}?`)];
    }
    return out;
  }
}
