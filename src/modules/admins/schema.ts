import { ROLES, type Role } from "../../http/roles";
import { z } from "zod";

export const signInBody = z.object({ email: z.string().max(320), password: z.string().max(1024) });
export const setupBody = z.object({ email: z.string().max(320), password: z.string().max(1024), token: z.string().max(200).optional() });
export const selectTenantBody = z.object({ project_id: z.string().min(1).max(100), mode: z.enum(["test", "live"]) });
export const createAdminBody = z.object({ email: z.string().max(320), password: z.string().max(1024), role: z.enum(ROLES) });
export const changeRoleBody = z.object({ role: z.enum(ROLES) });
export const createProjectBody = z.object({ name: z.string().max(200) });
export const secondStepBody = z.object({ challenge: z.string().max(200), code: z.string().max(100) });
export const codeBody = z.object({ code: z.string().max(100) });

/** What the dashboard shell knows of its session: who, where, and the CSRF token its writes carry. */
export type SessionView = {
  admin: { id: string; email: string; role: Role };
  /** Whether the account has a second factor, and whether it must enrol one before anything else (decision 151). */
  second_factor: { enrolled: boolean; must_enrol: boolean };
  csrf_token: string;
  tenant: { project_id: string; project_name: string; mode: "test" | "live" } | null;
  projects: { id: string; name: string }[];
};
