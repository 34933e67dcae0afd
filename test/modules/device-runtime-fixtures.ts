import type { makeTenant, makeTestApp } from "../helpers";

type T = Awaited<ReturnType<typeof makeTestApp>>;
let serial = 0;

/** A registered device bound to a fresh end user, with its device token (through the API, as a client would). */
export async function boundDevice(t: T, key: string, options: { capabilities?: number; model?: "parley_pin" | "parley_note" } = {}) {
  const user = await t.call("POST", "/v1/end-users", { key, body: {} });
  const device = await t.call("POST", "/v1/devices", {
    key,
    body: { serial_number: `SN-RT-${++serial}-${Date.now()}`, model: options.model ?? "parley_pin", capabilities: options.capabilities ?? 0x07 },
  });
  if (device.status !== 201) throw new Error(`device create failed: ${JSON.stringify(device.body)}`);
  const bound = await t.call("POST", `/v1/devices/${device.body.id}/bind`, { key, body: { end_user_id: user.body.id } });
  if (bound.status !== 200) throw new Error(`bind failed: ${JSON.stringify(bound.body)}`);
  const token: string = bound.body.device_token;
  const heartbeat = (body: Record<string, unknown> = {}) =>
    t.call("POST", `/v1/devices/${device.body.id}/heartbeat`, { key: token, body: { channel: "wifi", ...body } });
  return { id: device.body.id as string, endUserId: user.body.id as string, token, heartbeat };
}

export type Tenant = ReturnType<typeof makeTenant>;
