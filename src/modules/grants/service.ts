import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { loadDeviceRow } from "../devices/service";
import { CAPABILITY } from "../devices/schema";
import type { Grant, GrantPublicKey } from "./schema";
import type { GrantKeys } from "./signing";

/**
 * POST /devices/{id}/wifi-config/grant (spec 4.2). Stateless: nothing is stored, and no
 * WiFi password is involved. Single use is the device's part: it keeps each grant's `jti`
 * until `exp` and refuses a repeat (decision 021).
 */
export function issueWifiGrant(db: Database, keys: GrantKeys, principal: Principal, deviceId: string, expiresInSeconds: number, now: Date): Grant {
  const device = loadDeviceRow(db, principal, deviceId);
  if ((device.capabilities & CAPABILITY.WIFI_UPLOAD) === 0) {
    throw new ApiError("device_not_wifi_capable", `Device ${device.id} lacks the WiFi upload capability (0x02).`);
  }
  return sign(
    keys,
    principal,
    { typ: "wifi_config", dev: device.id, sn: device.serial_number, jti: randomBytes(16).toString("base64url") },
    expiresInSeconds,
    now,
  );
}

/**
 * POST /devices/{id}/deprovision/grant: authorizes the device to forget its WiFi and
 * pairing (not a factory reset). Bound to the nonce the device generated and showed over
 * Bluetooth, so a grant works once, on that device, for that request only.
 */
export function issueDeprovisionGrant(
  db: Database,
  keys: GrantKeys,
  principal: Principal,
  deviceId: string,
  nonce: string,
  expiresInSeconds: number,
  now: Date,
): Grant {
  const device = loadDeviceRow(db, principal, deviceId);
  return sign(keys, principal, { typ: "deprovision", dev: device.id, sn: device.serial_number, nonce }, expiresInSeconds, now);
}

function sign(keys: GrantKeys, principal: Principal, claims: Record<string, unknown>, expiresInSeconds: number, now: Date): Grant {
  const expiresAt = new Date(now.getTime() + expiresInSeconds * 1000);
  const iat = Math.floor(now.getTime() / 1000);
  const grant_blob = keys.sign(principal.organizationId, { ...claims, org: principal.organizationId, iat, exp: iat + expiresInSeconds });
  return { grant_blob, expires_at: expiresAt.toISOString() };
}

/** The key devices verify grants with (provisioned at manufacture or fetched by the app). */
export function grantVerificationKey(keys: GrantKeys, principal: Principal): GrantPublicKey {
  return { algorithm: "Ed25519", public_key: keys.publicKey(principal.organizationId), encoding: "base64url-raw" };
}
