import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ConfigError, DEFAULT_LLM, EARLIER_DEFAULT_LLM, loadConfig } from "../src/config";
import { modelFilePath } from "../src/model-files/manifest";
import { makeTempDir } from "./helpers";
import { ROLES } from "../src/http/roles";

describe("config", () => {
  test("embedded defaults (decisions.md)", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, host: "127.0.0.1", dataDir: "./data", modelsDir: "./models", publicUrl: "http://127.0.0.1:8080" });
    expect(c.rateLimit).toEqual({ perSecond: 100, perMinute: 1000 });
    expect(c.webhooks.retryDelaysSeconds).toEqual([60, 300, 1800, 7200, 28800]);
    expect(c.webhooks.denyPrivate).toBe(false);
    expect(Object.isFrozen(c)).toBe(true);
  });

  test("the LLM: Q4_0 by default; a box with only the earlier default's Q4_K_M file keeps that (decision 235)", () => {
    const modelsDir = makeTempDir();
    const install = (file: string) => {
      mkdirSync(dirname(join(modelsDir, file)), { recursive: true });
      writeFileSync(join(modelsDir, file), "gguf");
    };
    const llm = (env: Record<string, string> = {}) => loadConfig({ PARLEY_MODELS_DIR: modelsDir, ...env }).models.llm;
    // The paths this leaf names are the manifest's.
    for (const m of [DEFAULT_LLM, EARLIER_DEFAULT_LLM]) expect(modelFilePath(modelsDir, m.name)).toBe(join(modelsDir, m.file));
    expect(llm()).toBe("qwen2.5-1.5b-instruct-q4_0");
    const kept = (env: Record<string, string> = {}) => loadConfig({ PARLEY_MODELS_DIR: modelsDir, ...env }).models.llmKeptFromEarlierDefault;
    expect(kept()).toBe(false);
    install(EARLIER_DEFAULT_LLM.file);
    expect(llm()).toBe("qwen2.5-1.5b-instruct-q4");
    expect(llm({ PARLEY_LLM_MODEL: "" })).toBe("qwen2.5-1.5b-instruct-q4");
    expect(kept()).toBe(true);
    expect(kept({ PARLEY_LLM_MODEL: "qwen2.5-1.5b-instruct-q4" })).toBe(false);
    install(DEFAULT_LLM.file);
    expect(llm()).toBe("qwen2.5-1.5b-instruct-q4_0");
    expect(kept()).toBe(false);
    // Set, the variable wins whatever is installed.
    expect(llm({ PARLEY_LLM_MODEL: "qwen2.5-1.5b-instruct-q4" })).toBe("qwen2.5-1.5b-instruct-q4");
  });

  test("variables override, the public URL follows the port", () => {
    const c = loadConfig({ PARLEY_PORT: "9000", PARLEY_WEBHOOK_RETRY_DELAYS: "1,2,3", PARLEY_WEBHOOK_DENY_PRIVATE: "1", PARLEY_RATE_LIMIT_PER_SECOND: "0" });
    expect(c.publicUrl).toBe("http://127.0.0.1:9000");
    expect(c.webhooks.retryDelaysSeconds).toEqual([1, 2, 3]);
    expect(c.webhooks.denyPrivate).toBe(true);
    expect(c.rateLimit.perSecond).toBe(0);
    expect(loadConfig({ PARLEY_PUBLIC_URL: "https://parley.clinic.lan/" }).publicUrl).toBe("https://parley.clinic.lan");
  });

  test("every bad value is named in one clear error", () => {
    let err: unknown;
    try {
      loadConfig({ PARLEY_PORT: "eighty", PARLEY_WEBHOOK_RETRY_DELAYS: "1,,2", PARLEY_GPU: "tpu" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    for (const name of ["PARLEY_PORT", "PARLEY_WEBHOOK_RETRY_DELAYS", "PARLEY_GPU"]) expect(message).toContain(name);
  });

  test("an empty number is an error, never a silent 0 (a random port, rate limits off)", () => {
    for (const name of ["PARLEY_PORT", "PARLEY_RATE_LIMIT_PER_SECOND", "PARLEY_PROCESSING_TIME_FACTOR"]) {
      expect(() => loadConfig({ [name]: "" })).toThrow(name);
    }
    expect(loadConfig({ PARLEY_PROCESSING_MIN_SECONDS: "0.5", PARLEY_RATE_LIMIT_PER_SECOND: "0" })).toMatchObject({ rateLimit: { perSecond: 0 } });
  });

  describe("single sign-on (PARLEY_OIDC_*)", () => {
    const issuer = { PARLEY_OIDC_ISSUER: "https://idp.clinic.example/realms/staff", PARLEY_OIDC_CLIENT_ID: "parley" };

    test("off by default; on with an issuer, a client and a role map whose groups may hold '='", () => {
      expect(loadConfig({}).oidc).toBeNull();
      const c = loadConfig({ ...issuer, PARLEY_OIDC_CLIENT_SECRET: "s", PARLEY_OIDC_ROLE_MAP: " parley-admins = admin , cn=auditors=compliance" });
      expect(c.oidc).toMatchObject({ issuer: issuer.PARLEY_OIDC_ISSUER, clientId: "parley", clientSecret: "s", roleClaim: "groups" });
      expect([...c.oidc!.roleMap]).toEqual([
        ["parley-admins", "admin"],
        ["cn=auditors", "compliance"],
      ]);
    });

    test("every role of src/http/roles.ts may be mapped to, and nothing else", () => {
      const map = ROLES.map((role) => `g-${role}=${role}`).join(",");
      expect([...loadConfig({ ...issuer, PARLEY_OIDC_ROLE_MAP: map }).oidc!.roleMap.values()]).toEqual([...ROLES]);
      expect(() => loadConfig({ ...issuer, PARLEY_OIDC_ROLE_MAP: "g=superuser" })).toThrow("PARLEY_OIDC_ROLE_MAP");
      expect(() => loadConfig({ ...issuer, PARLEY_OIDC_ROLE_MAP: "admin" })).toThrow("GROUP=ROLE");
    });

    test("an issuer needs a client id and a role map; a client without an issuer is named too", () => {
      expect(() => loadConfig({ PARLEY_OIDC_ISSUER: issuer.PARLEY_OIDC_ISSUER, PARLEY_OIDC_ROLE_MAP: "g=admin" })).toThrow("PARLEY_OIDC_CLIENT_ID");
      expect(() => loadConfig(issuer)).toThrow("PARLEY_OIDC_ROLE_MAP");
      expect(() => loadConfig({ PARLEY_OIDC_CLIENT_ID: "parley" })).toThrow("PARLEY_OIDC_ISSUER");
      expect(() => loadConfig({ ...issuer, PARLEY_OIDC_ISSUER: "not a url", PARLEY_OIDC_ROLE_MAP: "g=admin" })).toThrow("PARLEY_OIDC_ISSUER");
    });
  });
});
