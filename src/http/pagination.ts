import type { Database, SQLQueryBindings } from "bun:sqlite";
import { z } from "zod";
import { ApiError } from "./errors";

/** Query parameters every list endpoint takes (spec 8: limit default 20, max 100). */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).optional(),
};

export type PageRequest = { limit: number; cursor?: string };
export type Page<T> = { data: T[]; has_more: boolean; next_cursor?: string; total: number };

const pageSchema = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().optional(), total: z.number().int() });
type PageSchema<T extends z.ZodType> = ReturnType<typeof pageSchema<T>>;
const pages = new WeakMap<z.ZodType, PageSchema<z.ZodType>>();

/**
 * The list envelope of spec 2.11 around one resource: what every list endpoint returns.
 * Named after the resource (DevicePage) so a generated client has one type for it, and
 * kept: routes are built once per app, and a name may be registered only once.
 */
export function pageOf<T extends z.ZodType>(item: T): PageSchema<T> {
  const known = pages.get(item);
  if (known) return known as PageSchema<T>;
  const id = z.globalRegistry.get(item)?.id;
  const page = id ? pageSchema(item).meta({ id: `${id}Page` }) : pageSchema(item);
  pages.set(item, page);
  return page;
}

type Position = { created_at: string; id: string };

function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.created_at, p.id])).toString("base64url");
}

function decodeCursor(cursor: string): Position {
  try {
    const [created_at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof created_at === "string" && typeof id === "string") return { created_at, id };
  } catch {}
  throw new ApiError("invalid_request", "The cursor is not one this API returned.", { param: "cursor" });
}

/**
 * One page of `table` rows matching `where`, newest first, with an opaque cursor on
 * (created_at, id). Not a snapshot: rows created meanwhile may appear on later pages.
 */
export function paginate<Row extends Position, T>(
  db: Database,
  query: { table: string; where: string[]; params: SQLQueryBindings[] },
  page: PageRequest,
  toResource: (row: Row) => T,
): Page<T> {
  const where = query.where.length ? query.where.join(" AND ") : "1";
  const total = db.query<{ n: number }, SQLQueryBindings[]>(`SELECT COUNT(*) AS n FROM ${query.table} WHERE ${where}`).get(...query.params)?.n ?? 0;
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  const rows = db
    .query<Row, SQLQueryBindings[]>(
      `SELECT * FROM ${query.table} WHERE ${where} ${after ? "AND (created_at, id) < (?, ?)" : ""}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .all(...query.params, ...(after ? [after.created_at, after.id] : []), page.limit + 1);
  const hasMore = rows.length > page.limit;
  const data = rows.slice(0, page.limit);
  const last = data[data.length - 1];
  return {
    data: data.map(toResource),
    has_more: hasMore,
    ...(hasMore && last ? { next_cursor: encodeCursor(last) } : {}),
    total,
  };
}
