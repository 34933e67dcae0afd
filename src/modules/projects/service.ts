import type { Database } from "bun:sqlite";
import { ApiError } from "../../http/errors";
import { ensureDefaultOrganization, findProjectByName, insertProject, type Project } from "./store";

/** What other modules (keys, webhooks, the CLIs and boot) use of the projects store: through this service, never the store itself (decision 083). */
export { ensureDefaultOrganization, findProjectByName, getOrganization, listProjects } from "./store";

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/** Makes a project in the default organization; names are unique and 1-64 plain characters. */
export function createProject(db: Database, name: string, now: Date): Project {
  if (!PROJECT_NAME.test(name)) {
    throw new ApiError("validation_error", "A project name is 1-64 letters, digits, spaces, dots, hyphens or underscores.", { param: "name" });
  }
  if (findProjectByName(db, name)) throw new ApiError("resource_already_exists", `A project named ${name} already exists.`, { param: "name" });
  const org = ensureDefaultOrganization(db, now);
  return insertProject(db, org.id, name, now);
}
