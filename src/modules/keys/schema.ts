import { z } from "zod";

/** The Keys page's create form: a secret key holds every scope, a restricted one those named (one at least); an end user confines either. */
export const createKeyBody = z.object({
  kind: z.enum(["secret", "restricted"]),
  name: z.string().max(200).nullish(),
  scopes: z.array(z.string().max(100)).max(50).optional(),
  end_user_id: z.string().min(1).max(100).nullish(),
});
