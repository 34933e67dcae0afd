// In a checkout `parley` is no command of the shell: what the CLI tells an operator to run next
// starts as they run it here, `npm run parley --` (decision 121), as doctor's advice already does.
import { describe, expect, test } from "bun:test";
import { makeTempDir } from "../helpers";
import { parley } from "../support/server-process";

const env = () => ({ PARLEY_DATA_DIR: makeTempDir(), PARLEY_MODELS_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" });

describe("the CLI's next-step advice in a checkout", () => {
  test("a key for a project not made yet, the administrators of a fresh install, a project delete to confirm", async () => {
    const e = env();
    const key = await parley(["keys", "create", "--project", "clinic", "--mode", "test"], e);
    expect(key.code).toBe(1);
    expect(key.stderr).toContain("Create it with: npm run parley -- projects create clinic");

    const admins = await parley(["admin", "list"], e);
    expect(admins.stdout).toBe("no administrators yet: npm run parley -- admin create EMAIL\n");

    await parley(["projects", "create", "clinic"], e);
    const unconfirmed = await parley(["projects", "delete", "clinic"], e);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain('To delete it: npm run parley -- projects delete "clinic" --yes');
  }, 60_000);

  test("a list with nothing in it says so and what comes next, rather than print nothing", async () => {
    const e = env();
    const verify = await parley(["models", "verify"], e);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toBe("no model installed, nothing to verify: npm run parley -- models list shows what can be installed\n");
    const firmware = await parley(["firmware", "list"], e);
    expect(firmware.code).toBe(0);
    expect(firmware.stdout).toBe("no firmware release yet: npm run parley -- firmware add --version V --model M --file PATH adds one\n");
  }, 60_000);

  test("a pull that cannot reach the mirror says what to do on a box without internet access", async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once, as offline.
    const pull = await parley(["models", "pull", "whisper-base.en"], { ...env(), PARLEY_MODEL_MIRROR: "http://127.0.0.1:1" });
    expect(pull.code).toBe(1);
    expect(pull.stderr).toContain("error: cannot reach http://127.0.0.1:1/");
    expect(pull.stderr).toContain("set PARLEY_MODEL_MIRROR to a mirror it can reach, or run npm run parley -- models import PATH");
  }, 60_000);
});
