// A real OpenID provider for the external sign-in tests (tests/identity/test_external_login.py):
// node-oidc-provider on 127.0.0.1, a free port. Started by tests/support/oidc_provider.py:
//   node provider.mjs   (env: OIDC_CLIENT_ID, OIDC_CLIENT_SECRET)
// It prints one line "listening <issuer>" once it answers.
//
// Any username signs in (no password): the account id is the login given at the
// interaction, and its claims are preferred_username = login, name and email.
// The interaction is driven by the test over HTTP:
//   GET  /interaction/:uid          -> JSON {uid, prompt}
//   POST /interaction/:uid/login    form login=<name>  -> 303 back to the authorization
//   POST /interaction/:uid/confirm  (consent: every scope and claim asked for)
//   POST /interaction/:uid/abort    -> the client gets error=access_denied
// Redirect URIs: any http://127.0.0.1:<port>/... or http://localhost:<port>/... (the tests'
// Wharf servers listen on a free port each).
import http from 'node:http';
import Provider from 'oidc-provider';

const clientId = process.env.OIDC_CLIENT_ID || 'wharf';
const clientSecret = process.env.OIDC_CLIENT_SECRET || 'wharf-test-secret';

function readForm(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => resolve(Object.fromEntries(new URLSearchParams(body))));
    req.on('error', reject);
  });
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

let provider;
let handle;

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) return json(res, 400, { error: 'uid mismatch' });
  if (req.method === 'GET' && !action) {
    return json(res, 200, { uid, prompt: details.prompt.name, params: details.params });
  }
  if (req.method !== 'POST') return json(res, 405, { error: 'method' });
  const form = await readForm(req);
  let result;
  if (action === 'login') {
    if (!form.login) return json(res, 400, { error: 'login required' });
    result = { login: { accountId: form.login } };
  } else if (action === 'confirm') {
    const { prompt: { details: missing }, params, session } = details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    if (missing.missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    result = { consent: { grantId: await grant.save() } };
  } else if (action === 'abort') {
    result = { error: 'access_denied', error_description: 'The user refused.' };
  } else {
    return json(res, 404, { error: 'no such action' });
  }
  return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const server = http.createServer((req, res) => {
  const match = /^\/interaction\/([^/?]+)(?:\/([a-z]+))?/.exec(req.url);
  if (match) {
    interaction(req, res, match[1], match[2]).catch((err) => {
      if (!res.headersSent) json(res, 500, { error: String(err) });
    });
    return;
  }
  handle(req, res);
});

server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (ctx, i) => `/interaction/${i.uid}` },
    cookies: { keys: ['wharf-test-cookie-key-0123456789'] },
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
    },
    async findAccount(ctx, id) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, preferred_username: id, name: `User ${id}`,
                   email: `${id}@example.test`, email_verified: true };
        },
      };
    },
  });
  // The tests' Wharf servers listen on a free port each: any loopback redirect URI.
  provider.Client.prototype.redirectUriAllowed = function allowed(uri) {
    try {
      const u = new URL(uri);
      return u.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(u.hostname);
    } catch {
      return false;
    }
  };
  handle = provider.callback();
  process.stdout.write(`listening ${issuer}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
