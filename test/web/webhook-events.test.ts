import { expect, test } from "bun:test";
import { EVENT_TYPES } from "../../src/events/outbox";
// @ts-expect-error: a plain browser module without types
import { EVENTS } from "../../web/pages/webhooks/events.js";

// The webhooks page lists the event types itself (no endpoint lists them): kept equal here.
test("the webhooks page offers exactly the API's event types", () => {
  expect(EVENTS).toEqual([...EVENT_TYPES]);
});
