import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "./helpers";

// The container image (Dockerfile, decision 088): build the CPU image from a freshly compiled
// dist/parley on a debootstrapped bookworm base (scripts/container-base.sh), run it and get a
// 200 from /healthz and a healthy HEALTHCHECK. Where podman cannot run here (not installed,
// not root, no debootstrap, a runtime that will not start) the test is skipped with the reason
// printed. PARLEY_SKIP_CONTAINER_TEST=1 skips it on purpose.
const root = join(import.meta.dir, "..");
const BASE = "localhost/parley-base:bookworm";
const IMAGE = "localhost/parley-test:latest";

function run(cmd: string[], timeoutMs = 600_000): { ok: boolean; out: string } {
  try {
    const r = Bun.spawnSync(cmd, { cwd: root, stdout: "pipe", stderr: "pipe", timeout: timeoutMs });
    return { ok: r.exitCode === 0, out: `${r.stdout.toString()}${r.stderr.toString()}`.trim() };
  } catch (e) {
    return { ok: false, out: String(e) }; // not on PATH
  }
}

// This kind of machine mounts cgroup v1 (crun refuses hybrid mode: runc starts) and caps
// RLIMIT_NOFILE/NPROC below podman's defaults (an explicit --ulimit at or under them starts).
const runtime = run(["sh", "-c", "command -v runc"]).ok ? ["--runtime", "runc"] : [];
const nofile = run(["sh", "-c", "ulimit -Hn"]).out;
const limits = ["--ulimit", `nofile=${nofile}:${nofile}`, "--ulimit", "nproc=4096:4096"];
const podman = (...args: string[]) => ["podman", ...runtime, ...args];

function whyNot(): string | null {
  if (process.env.PARLEY_SKIP_CONTAINER_TEST === "1") return "PARLEY_SKIP_CONTAINER_TEST=1";
  if (!run(["podman", "--version"]).ok) return "podman is not installed (apt-get install podman)";
  if (process.getuid?.() !== 0) return "not root: debootstrap and rootful podman need root";
  const info = run(podman("info"));
  if (!info.ok) return `podman info fails: ${info.out.split("\n").slice(-1)[0]}`;
  if (!run(podman("image", "exists", BASE)).ok) {
    const base = run(["bash", "scripts/container-base.sh", BASE]);
    if (!base.ok) return `no base image (scripts/container-base.sh): ${base.out.split("\n").slice(-3).join(" | ")}`;
  }
  const probe = run(podman("run", "--rm", ...limits, BASE, "true"), 60_000);
  if (!probe.ok) return `podman cannot run a container here: ${probe.out.split("\n").slice(-1)[0]}`;
  return null;
}

const t0 = performance.now();
const skip = whyNot();
const baseMs = performance.now() - t0;
if (skip) console.warn(`container test skipped: ${skip}`);

describe("container image", () => {
  test.skipIf(skip !== null)(
    "builds from the Dockerfile, runs as non-root and answers /healthz with 200",
    async () => {
      const started = performance.now();
      const ctx = makeTempDir("parley-image-");
      mkdirSync(join(ctx, "dist"));
      for (const f of ["Dockerfile", ".dockerignore"]) copyFileSync(join(root, f), join(ctx, f));
      const compiled = run([process.execPath, join(root, "scripts", "build.ts"), join(ctx, "dist", "parley")]);
      expect(compiled.out).toContain("built");

      const build = run(podman("build", "--format", "docker", ...limits, "--build-arg", `BASE_IMAGE=${BASE}`, "--target", "prebuilt", "-t", IMAGE, ctx));
      if (!build.ok) console.error(build.out.split("\n").slice(-30).join("\n"));
      expect(build.ok).toBe(true);
      const config = JSON.parse(run(podman("image", "inspect", IMAGE)).out)[0].Config;
      expect(config.User).toBe("parley");
      expect(Object.keys(config.Volumes ?? {}).sort()).toEqual(["/data", "/models"]);

      const name = `parley-test-${process.pid}`;
      const port = 20000 + Math.floor(Math.random() * 20000);
      const started2 = run(podman("run", "-d", "--name", name, ...limits, "-p", `127.0.0.1:${port}:8080`, "-e", "PARLEY_LOG_LEVEL=warn", IMAGE));
      expect(started2.out).not.toContain("Error");
      try {
        let status = 0;
        // Until it answers (a minute at most: the start takes well under a second on a quiet machine).
        for (let i = 0; i < 600 && status !== 200; i++) {
          await Bun.sleep(100);
          status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.status,
            () => 0,
          );
        }
        expect(status).toBe(200);
        expect(run(podman("exec", name, "id", "-u")).out).toBe("10001");
        // The image's HEALTHCHECK command itself (podman runs it on demand without systemd).
        expect(run(podman("healthcheck", "run", name)).ok).toBe(true);
      } finally {
        run(podman("rm", "-f", "-t", "5", name));
        const size = run(podman("image", "inspect", IMAGE, "--format", "{{.Size}}")).out;
        run(podman("rmi", "-f", IMAGE));
        console.log(
          `container test: base ready in ${(baseMs / 1000).toFixed(1)} s, image ${(Number(size) / 1e6).toFixed(0)} MB, build+run ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
    },
    600_000,
  );
});
