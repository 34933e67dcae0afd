/** Test or live data: every key, row and event belongs to one mode. */
export type Mode = "test" | "live";

/** Which project and mode a row belongs to; every store query filters on both. */
export type Tenant = { projectId: string; mode: Mode };
