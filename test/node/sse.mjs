// A third-party client: the npm graphql-sse client (distinct connections
// mode: one POST with Accept: text/event-stream per operation) against a
// running foya serve. Runs a query (next + complete) and a sessionEvents
// subscription that sees an update. Usage: node sse.mjs http://127.0.0.1:PORT
import { createClient } from 'graphql-sse';

const base = process.argv[2];
if (!base) {
  console.error('usage: node sse.mjs http://127.0.0.1:PORT');
  process.exit(2);
}
const fail = (msg) => {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
};
const token = process.env.FOYA_TOKEN; // the kernel's bearer token
const auth = token ? { authorization: `Bearer ${token}` } : {};
const client = createClient({ url: `${base}/graphql`, singleConnection: false, retryAttempts: 0, headers: auth });

const q = [];
for await (const r of client.iterate({ query: '{ __typename }' })) q.push(r);
if (q.length !== 1 || q[0].data?.__typename !== 'Query') fail(`query: ${JSON.stringify(q)}`);

const res = await fetch(`${base}/graphql`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...auth },
  body: JSON.stringify({ query: 'mutation { createSession(input: {title: "sse"}) { id } }' }),
});
const id = (await res.json()).data.createSession.id;
const events = [];
const sub = client.iterate({
  query: 'subscription($id: ID!) { sessionEvents(sessionId: $id, afterSeq: 0) { seq type } }',
  variables: { id },
});
const timer = setTimeout(() => fail(`timeout: ${JSON.stringify(events)}`), 20000);
let updated = false;
for await (const r of sub) {
  if (r.errors) fail(JSON.stringify(r.errors));
  events.push(r.data.sessionEvents);
  if (!updated) {
    updated = true;
    await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ query: 'mutation($id: ID!) { updateSession(id: $id, input: {title: "sse 2"}) { id } }', variables: { id } }),
    });
  }
  if (events.filter((e) => e.seq !== null).length >= 2) break; // created + updated
}
clearTimeout(timer);
console.log(`ok: query over SSE, ${events.length} sessionEvents (seqs ${events.map((e) => e.seq).join(',')})`);
