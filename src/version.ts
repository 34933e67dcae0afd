import packageJson from "../package.json";

/**
 * Parley's version, from package.json. The import is inlined by the bundler, so the
 * compiled executable carries it and never reads a package.json beside itself.
 */
export const PARLEY_VERSION: string = packageJson.version;
