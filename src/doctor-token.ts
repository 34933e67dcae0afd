import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * How `parley doctor` asks the server running on its data dir for its checks (decision 119):
 * a token only someone who can read the data dir's secret (or has PARLEY_SECRET) can make,
 * derived for this purpose alone, sent in this header. It opens nothing but the checks.
 */
export const DOCTOR_HEADER = "x-parley-doctor";

export const doctorToken = (serverSecret: string): string => createHmac("sha256", serverSecret).update("parley:doctor-checks").digest("hex");

export function isDoctorToken(serverSecret: string, presented: string | null): boolean {
  if (!presented) return false;
  const expected = Buffer.from(doctorToken(serverSecret));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
