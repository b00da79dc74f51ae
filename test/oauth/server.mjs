// The authorization server of the MCP OAuth check: the npm oauth2-mock-server
// (issues RS256 JWTs, checks PKCE) with what a hosted MCP server's
// authorization server does on top, added through its documented hooks:
// dynamic client registration (RFC 7591) at /register, access tokens bound
// to the `resource` indicator (aud) with a lifetime of TOKEN_TTL seconds,
// rotating refresh tokens (a refresh token works once; reuse is refused
// with invalid_grant and counted), revocation (RFC 7009) recorded, and the
// scope asked for at /authorize granted: carried by the code to the access
// token's `scope` claim and the token answer, and kept by refreshes.
// With CIMD=1 it takes client ID metadata documents instead of dynamic
// registration (draft-ietf-oauth-client-id-metadata-document, as some
// hosted MCP servers' authorization servers do): its metadata says
// client_id_metadata_document_supported and has no registration_endpoint;
// /authorize fetches the client_id URL (https) and refuses a document
// whose client_id is not that URL or whose redirect_uris lack the
// redirect_uri, then hands over to the mock's own authorization endpoint;
// the token endpoint refuses a client_id no document vouched for.
// It prints one JSON line {"issuer": …} once it listens; GET /stats reports
// the counters.
import { OAuth2Server } from "oauth2-mock-server";

const ttl = Number(process.env.TOKEN_TTL || "3600");
const cimd = process.env.CIMD === "1";
const server = new OAuth2Server(undefined, undefined, { endpoints: { revoke: "/revoke-unused", ...(cimd ? { authorize: "/authorize-checked" } : {}) } });
await server.issuer.keys.generate("RS256");

const valid = new Set(); // refresh tokens that may be used (once)
const codeScopes = new Map(); // authorization code → the scope asked at /authorize
const refreshScopes = new Map(); // refresh token → its grant's scope
const stats = { registrations: 0, codeExchanges: 0, refreshes: 0, refusedRefreshes: 0, revocations: 0, resources: [], issued: [], documentsRead: 0, documentsRefused: [], clientIds: [] };
const vouched = new Set(); // client_id URLs whose document was read and fits

server.service.on("beforeWellKnownOpenIdConfiguration", (res) => {
  res.body.revocation_endpoint = server.issuer.url + "/revoke";
  if (cimd) {
    res.body.client_id_metadata_document_supported = true;
    res.body.authorization_endpoint = server.issuer.url + "/authorize";
    delete res.body.registration_endpoint;
  } else {
    res.body.registration_endpoint = server.issuer.url + "/register";
  }
});
server.service.on("beforeAuthorizeRedirect", (redirect, req) => {
  const code = redirect.url.searchParams.get("code");
  if (code) codeScopes.set(code, (req.query && req.query.scope) || "");
});
server.service.on("beforeTokenSigning", (token, req) => {
  token.payload.exp = Math.floor(Date.now() / 1000) + ttl;
  const body = req.body || {};
  if (body.resource) token.payload.aud = body.resource;
  let scope;
  if (body.grant_type === "authorization_code") scope = codeScopes.get(body.code);
  else if (body.grant_type === "refresh_token") scope = refreshScopes.get(body.refresh_token);
  if (scope !== undefined) {
    token.payload.scope = scope;
    req.grantedScope = scope;
  }
});
server.service.on("beforeResponse", (res, req) => {
  const body = req.body || {};
  if (cimd && body.client_id !== undefined) stats.clientIds.push(body.client_id);
  if (cimd && !vouched.has(body.client_id)) {
    res.statusCode = 401;
    res.body = { error: "invalid_client", error_description: "no client ID metadata document vouches for this client_id" };
    return;
  }
  if (body.resource) stats.resources.push(body.resource);
  if (body.grant_type === "refresh_token") {
    if (!valid.delete(body.refresh_token)) {
      stats.refusedRefreshes++;
      res.statusCode = 400;
      res.body = { error: "invalid_grant", error_description: "refresh token unknown, revoked or already used" };
      return;
    }
    stats.refreshes++;
  } else if (body.grant_type === "authorization_code") {
    stats.codeExchanges++;
  }
  if (res.statusCode === 200) res.body.expires_in = ttl;
  if (req.grantedScope !== undefined && res.statusCode === 200) res.body.scope = req.grantedScope;
  if (res.body.refresh_token) {
    valid.add(res.body.refresh_token);
    if (req.grantedScope !== undefined) refreshScopes.set(res.body.refresh_token, req.grantedScope);
  }
  // Every token handed out, for the check that none shows in clear.
  for (const k of ["access_token", "refresh_token", "id_token"]) if (res.body[k]) stats.issued.push(res.body[k]);
});
server.service.addRoute("POST", "/register", (req, res) => {
  stats.registrations++;
  const meta = req.body || {};
  res.setHeader("Content-Type", "application/json");
  res.statusCode = 201;
  res.end(JSON.stringify({ ...meta, client_id: "dcr-" + stats.registrations + "-" + Date.now(), client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: "none" }));
});
server.service.addRoute("POST", "/revoke", (req, res) => {
  const token = req.body && req.body.token;
  if (token && valid.delete(token)) stats.revocations++;
  res.statusCode = 200;
  res.end();
});
// The authorization endpoint of CIMD=1: the client's document first.
if (cimd) server.service.addRoute("GET", "/authorize", async (req, res) => {
  const url = new URL(req.url, server.issuer.url);
  const clientId = url.searchParams.get("client_id") || "";
  const redirect = url.searchParams.get("redirect_uri") || "";
  const refuse = (why) => {
    stats.documentsRefused.push(why);
    res.statusCode = 400;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ error: "invalid_client", error_description: why }));
  };
  let doc;
  try {
    if (new URL(clientId).protocol !== "https:") return refuse("client_id is not an https URL");
    const r = await fetch(clientId, { headers: { Accept: "application/json" }, redirect: "error" });
    if (r.status !== 200) return refuse("the document answered " + r.status);
    doc = await r.json();
    stats.documentsRead++;
  } catch (e) {
    return refuse("the document could not be read: " + e.message);
  }
  if (doc.client_id !== clientId) return refuse("the document's client_id is not its URL");
  if (!Array.isArray(doc.redirect_uris) || !doc.redirect_uris.includes(redirect)) return refuse("redirect_uri is not in the document's redirect_uris");
  if (doc.token_endpoint_auth_method !== "none") return refuse("only public clients");
  vouched.add(clientId);
  res.statusCode = 302;
  res.setHeader("Location", server.issuer.url + "/authorize-checked" + url.search);
  res.end();
});
server.service.addRoute("GET", "/stats", (_req, res) => {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(stats));
});

await server.start(Number(process.env.PORT || "0"), "127.0.0.1");
server.issuer.url = "http://127.0.0.1:" + server.address().port;
process.stdout.write(JSON.stringify({ issuer: server.issuer.url }) + "\n");
process.on("SIGTERM", async () => { await server.stop(); process.exit(0); });
