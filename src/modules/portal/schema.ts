import { z } from "zod";

/** POST /me/api/invite: the token from a sign-in link's fragment. */
export const redeemBody = z.object({ token: z.string().min(1).max(200) });

/** What the portal's shell knows of its session: whose it is, the CSRF token its writes carry, and whether it may delete. */
export type WearerView = {
  end_user: { id: string; name: string | null; email: string | null };
  csrf_token: string;
  may_delete: boolean;
};
