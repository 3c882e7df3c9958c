// A real OpenID Connect provider for agentweb's sign-in tests (tests/sso/), node oidc-provider as its authors
// ship it: discovery, the code flow with PKCE, signed ID tokens, userinfo, RP-initiated logout, and its own
// development login page (devInteractions). Started by tests/support/oidc_provider.py with:
//   OIDC_PORT      the port to listen on (the issuer is http://127.0.0.1:<port>)
//   OIDC_ACCOUNTS  a JSON file {"<login>": {"email": …, "groups": […], …}}, read at every sign-in, so a test
//                  changes a person's groups at the provider by rewriting it; an unknown login cannot sign in
//   OIDC_CLIENTS   the registered clients, a JSON list of oidc-provider client metadata
import { readFileSync } from 'node:fs';

import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const clients = JSON.parse(process.env.OIDC_CLIENTS);

function accounts() {
  return JSON.parse(readFileSync(process.env.OIDC_ACCOUNTS, 'utf8'));
}

const configuration = {
  clients,
  cookies: { keys: ['agentweb-test-cookie-key-not-a-secret'] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username', 'given_name', 'family_name'],
    groups: ['groups'],
  },
  async findAccount(ctx, id) {
    const account = accounts()[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, preferred_username: id, email_verified: true, ...account };
      },
    };
  },
  // The test clients are first-party: no consent page, every scope asked for is granted.
  async loadExistingGrant(ctx) {
    const { client, session, params } = ctx.oidc;
    const grantId = ctx.oidc.result?.consent?.grantId || session.grantIdFor(client.clientId);
    if (grantId) {
      const found = await ctx.oidc.provider.Grant.find(grantId);
      if (found) return found;
    }
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope(String(params.scope || 'openid'));
    await grant.save();
    return grant;
  },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  pkce: { required: () => true },
};

const provider = new Provider(issuer, configuration);
provider.listen(port, '127.0.0.1', () => {
  console.log(`LISTENING ${issuer}`);
});
