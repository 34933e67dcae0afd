import { expect, test } from "bun:test";
import { purgeOldEvents, recordEvent } from "../../src/events/outbox";
import { makeTenant, makeTestApp } from "../helpers";

test("events are kept 30 days once fanned out; undelivered ones are never purged", async () => {
  const t = await makeTestApp();
  const { project } = makeTenant(t.deps);
  const tenant = { projectId: project.id, mode: "test" as const };
  const old = recordEvent(t.deps.db, tenant, "recording.deleted", { id: "rec_1" }, t.clock.now());
  const stuck = recordEvent(t.deps.db, tenant, "recording.deleted", { id: "rec_2" }, t.clock.now());
  t.deps.db.query("UPDATE events SET dispatched_at = created_at WHERE id = ?").run(old.id);
  t.clock.advance(29 * 86_400_000);
  expect(purgeOldEvents(t.deps.db, t.clock.now())).toBe(0);
  t.clock.advance(2 * 86_400_000);
  await t.runTask("purge-old-events");
  const left = (t.deps.db.query("SELECT id FROM events").all() as { id: string }[]).map((r) => r.id);
  expect(left).toEqual([stuck.id]);
});
