import { z } from "zod";
import { pageQuery } from "../../http/pagination";

export const listDisclosuresQuery = z.object({
  ...pageQuery,
  /** json (the list envelope, default) or csv (every disclosure, as an attachment). */
  format: z.enum(["json", "csv"]).default("json"),
});
export type ListDisclosuresQuery = z.infer<typeof listDisclosuresQuery>;
