import type { Deps } from "../../deps";
import { deleteWearerAccess } from "./store";

/** An end user's deletion ends their portal sessions and voids their unused links, in the same transaction (decision 147). */
export function registerPortalCascades(deps: Pick<Deps, "db" | "cascades">): void {
  deps.cascades.on("endUserDeleted", "portal", ({ endUserId }) => deleteWearerAccess(deps.db, endUserId));
}
