// A third-party client: subscribes to sessionEvents of a running foya serve
// with the npm graphql-ws package and checks replay + live with no gap and no
// duplicate. Usage: node subscribe.mjs http://127.0.0.1:PORT
// With FOYA_TOKEN set, it sends the token as a Bearer header and in
// connection_init, as a client of a kernel that requires one.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const base = process.argv[2];
const token = process.env.FOYA_TOKEN || '';
if (!base) {
  console.error('usage: node subscribe.mjs http://127.0.0.1:PORT');
  process.exit(2);
}

async function gql(query, variables) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const { createSession } = await gql('mutation { createSession(input: {title: "node"}) { id } }');
const id = createSession.id;
// Some history before subscribing: replayed.
for (let i = 0; i < 20; i++) {
  await gql('mutation($id: ID!, $t: String) { updateSession(id: $id, input: {title: $t}) { id } }', { id, t: `before ${i}` });
}

const client = createClient({
  url: `${base.replace(/^http/, 'ws')}/graphql`,
  webSocketImpl: WebSocket,
  connectionParams: token ? { authorization: `Bearer ${token}` } : undefined,
});
const want = 1 + 20 + 30;
const seen = [];
const done = new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`timeout: saw ${seen.join(',')}`)), 30000);
  client.subscribe(
    { query: 'subscription($id: ID!) { sessionEvents(sessionId: $id, afterSeq: 0) { seq type } }', variables: { id } },
    {
      next: ({ data, errors }) => {
        if (errors) return reject(new Error(JSON.stringify(errors)));
        const ev = data.sessionEvents;
        if (ev.seq === null) return;
        seen.push(ev.seq);
        if (ev.seq === want) {
          clearTimeout(timer);
          resolve();
        }
      },
      error: reject,
      complete: () => {},
    },
  );
});
// Live events while the replay is running.
for (let i = 0; i < 30; i++) {
  await gql('mutation($id: ID!, $t: String) { updateSession(id: $id, input: {title: $t}) { id } }', { id, t: `live ${i}` });
}
await done;
await client.dispose();
for (let i = 0; i < seen.length; i++) {
  if (seen[i] !== i + 1) {
    console.error(`gap or duplicate at ${i}: ${seen.join(',')}`);
    process.exit(1);
  }
}
console.log(`ok: ${seen.length} events, replay + live, no gap, no duplicate`);
