// A third-party check: the npm graphql-http audit suite (GraphQL over HTTP)
// against a running foya serve. Prints every result; exits 1 on any error
// or warning. Usage: node audit.mjs http://127.0.0.1:PORT/graphql
import { auditServer } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}
// The kernel requires its bearer token (FOYA_TOKEN): every audit request
// carries it, so the audit sees the GraphQL over HTTP behaviour behind it.
const token = process.env.FOYA_TOKEN;
const fetchFn = (input, init = {}) => {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
const results = await auditServer({ url, fetchFn });
let bad = 0;
for (const r of results) {
  if (r.status === 'ok') continue;
  bad++;
  let body = '';
  try {
    body = r.response ? await r.response.text() : '';
  } catch {}
  console.log(`${r.status.toUpperCase()} ${r.id} ${r.name}: ${r.reason}` + (r.response ? ` (status ${r.response.status}, content-type ${r.response.headers.get('content-type')}) ${body.slice(0, 300)}` : ''));
}
console.log(`${results.length} audits: ${results.filter((r) => r.status === 'ok').length} ok, ${results.filter((r) => r.status === 'warn').length} warnings, ${results.filter((r) => r.status === 'error').length} errors`);
process.exit(bad ? 1 : 0);
