// oidc-provider ships no types (and @types/oidc-provider lags its major versions): the little the tests use.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  type Context = { oidc: { provider: Provider; client?: { clientId: string }; session?: { accountId: string } } };
  type Account = { accountId: string; claims(): Promise<Record<string, unknown>> };
  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  type Configuration = Record<string, unknown> & {
    findAccount?(ctx: Context, id: string): Promise<Account | undefined>;
    loadExistingGrant?(ctx: Context): Promise<Grant>;
    interactions?: { url(ctx: Context, interaction: { uid: string }): string };
  };

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    Grant: new (properties: {
      clientId: string;
      accountId: string;
    }) => Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string }>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
}
