import { expect, test } from "bun:test";
import { purgeOldEvents, recordEvent } from "../../src/events/outbox";
import { fanOutEvents } from "../../src/modules/webhooks/delivery-store";
import { makeTenant, makeTestApp } from "../helpers";

test("events are kept 30 days once fanned out; undelivered ones are never purged", async () => {
  const t = await makeTestApp();
  const { project } = makeTenant(t.deps);
  const tenant = { projectId: project.id, mode: "test" as const };
  const old = recordEvent(t.deps, tenant, "recording.deleted", { id: "rec_1" }, t.clock.now());
  const stuck = recordEvent(t.deps, tenant, "recording.deleted", { id: "rec_2" }, t.clock.now());
  t.deps.db.query("UPDATE events SET dispatched_at = created_at WHERE id = ?").run(old.id);
  t.clock.advance(29 * 86_400_000);
  expect(purgeOldEvents(t.deps.db, t.clock.now())).toBe(0);
  t.clock.advance(2 * 86_400_000);
  await t.runTask("purge-old-events");
  const left = (t.deps.db.query("SELECT id FROM events").all() as { id: string }[]).map((r) => r.id);
  expect(left).toEqual([stuck.id]);
});

test("an event is kept while a webhook delivery of it is pending or ended within the delivery log's retention", async () => {
  const t = await makeTestApp();
  const acme = makeTenant(t.deps);
  const tenant = { projectId: acme.project.id, mode: "test" as const };
  const hook = (await t.call("POST", "/v1/webhooks", { key: acme.test, body: { url: "https://10.0.0.9:9/never", events: ["*"] } })).body;
  const emit = (id: string) => t.deps.db.transaction(() => recordEvent(t.deps, tenant, "recording.created", { id }, t.clock.now()))();
  const [done, retried, lateFailure] = [emit("rec_done"), emit("rec_retried"), emit("rec_late")];
  fanOutEvents(t.deps.db, t.clock.now());
  const deliveryOf = (eventId: string) => t.deps.db.query<{ id: string }, [string]>("SELECT id FROM webhook_deliveries WHERE event_id = ?").get(eventId)!.id;
  const end = (eventId: string, status: string) =>
    t.deps.db
      .query("UPDATE webhook_deliveries SET status = ?, next_attempt_at = NULL, completed_at = ? WHERE event_id = ?")
      .run(status, t.clock.now().toISOString(), eventId);
  end(done.id, "succeeded");
  end(retried.id, "failed");
  t.clock.advance(20 * 86_400_000);
  end(lateFailure.id, "failed");
  t.clock.advance(10 * 86_400_000);
  // Day 30: an operator retries the month-old failed delivery; it is pending again.
  expect((await t.call("POST", `/v1/webhooks/${hook.id}/deliveries/${deliveryOf(retried.id)}/retry`, { key: acme.test })).status).toBe(202);
  t.clock.advance(86_400_000);
  await t.runTask("purge-old-events");
  const events = () =>
    t.deps.db
      .query<{ id: string }, []>("SELECT id FROM events ORDER BY id")
      .all()
      .map((r) => r.id);
  expect(events()).toEqual([retried.id, lateFailure.id]);
  const pending = await t.call("GET", `/v1/webhooks/${hook.id}/deliveries?status=pending`, { key: acme.test });
  expect(pending.body.data.map((d: any) => d.event_id)).toEqual([retried.id]);
  // Once the late failure's log is 30 days old, its event goes too; the pending one stays.
  t.clock.advance(20 * 86_400_000);
  await t.runTask("purge-old-events");
  expect(events()).toEqual([retried.id]);
});
