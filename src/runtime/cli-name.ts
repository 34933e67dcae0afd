import { bundledRuntime } from "./bundled";

/**
 * How the operator runs parley here, for advice they can follow (decision 121): the compiled
 * executable (and the container, which runs it) is `parley`, a checkout `npm run parley --`.
 * Every command Parley advises (doctor, GET /v1/health, the dashboard, job failures) starts so.
 */
export const runningCli = (): string => (bundledRuntime ? "parley" : "npm run parley --");
