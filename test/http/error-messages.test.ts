// A body, query or path that fails its schema is 422 validation_error whose message names
// the field and says what is wrong in the caller's terms (issue #31 item 13), on every route:
// one mapping in src/http/errors.ts, not one per route.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = makeTenant(t.deps).test;
});

const error = async (method: string, path: string, body?: unknown) => {
  const r = await t.call(method, path, { key, body });
  expect(r.status).toBe(422);
  return r.body.error as { code: string; message: string; param?: string };
};

describe("validation_error messages", () => {
  test("an Ask without a body names the missing field, not the validator's 'Invalid input'", async () => {
    const e = await error("POST", "/v1/ask/sessions");
    expect(e).toEqual({
      code: "validation_error",
      param: "scope",
      message: "Missing required field scope (expected object).",
      request_id: expect.any(String),
    } as never);
  });

  test("a missing nested field carries its dotted path", async () => {
    const e = await error("POST", "/v1/ask/sessions", { scope: { type: "recording" } });
    expect(e.param).toBe("scope.recording_id");
    expect(e.message).toBe("Missing required field scope.recording_id (expected string).");
  });

  test("a wrong type says what was expected and what came", async () => {
    const e = await error("POST", "/v1/end-users", { external_id: 5 });
    expect(e.param).toBe("external_id");
    expect(e.message).toBe("Invalid field external_id: expected string, received number");
  });

  test("an unknown field of a strict body is named as unknown", async () => {
    const e = await error("POST", "/v1/transcriptions", { recording_id: "rec_x", bogus: 1 });
    expect(e.param).toBe("bogus");
    expect(e.message).toBe("Unknown field bogus: it is not accepted here.");
  });

  test("a query parameter out of range is named as one", async () => {
    const e = await error("GET", "/v1/end-users?limit=1000");
    expect(e.param).toBe("limit");
    expect(e.message).toStartWith("Invalid query parameter limit: ");
    expect(e.message).not.toContain("Invalid input");
  });
});

describe("the two 404 codes, as docs/api.md states them", () => {
  const doc = readFileSync(join(import.meta.dir, "..", "..", "docs", "api.md"), "utf8").replace(/\s+/g, " ");
  const codeFor = (what: string) => doc.match(new RegExp(`\`404 (\\w+)\` is about ${what}`))?.[1];

  test("an unknown route and an unknown path id answer the code the docs give the URL", async () => {
    expect(codeFor("the URL")).toBe("not_found");
    const route = await t.call("GET", "/v1/no-such-thing", { key });
    const pathId = await t.call("GET", "/v1/recordings/rec_unknown", { key });
    expect([route.status, route.body.error.code, pathId.status, pathId.body.error.code]).toEqual([404, codeFor("the URL"), 404, codeFor("the URL")]);
  });

  test("an unknown id a body field names answers the code the docs give it, with param", async () => {
    expect(codeFor("an id the body or query names")).toBe("resource_not_found");
    const r = await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: "rec_unknown" } });
    expect([r.status, r.body.error.code, r.body.error.param]).toEqual([404, codeFor("an id the body or query names"), "recording_id"]);
  });
});
