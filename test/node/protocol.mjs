// A third-party client: the npm graphql-ws client against a foya serve
// started with --ws-ping-interval 1s. Checks the graphql-transport-ws
// behaviour the protocol document asks for: the server's ping arrives and is
// answered (the socket stays), an operation refused before execution (here a
// validation error) reaches the client's error sink as the protocol's
// `error` message, a query gives next + complete, @defer is not offered.
// Usage: node protocol.mjs http://127.0.0.1:PORT
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const base = process.argv[2];
if (!base) {
  console.error('usage: node protocol.mjs http://127.0.0.1:PORT');
  process.exit(2);
}
const fail = (msg) => {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
};

let pings = 0;
let closed = null;
const token = process.env.FOYA_TOKEN; // the kernel's bearer token, sent in connection_init
const client = createClient({
  url: `${base.replace(/^http/, 'ws')}/graphql`,
  webSocketImpl: WebSocket,
  connectionParams: token ? { authorization: `Bearer ${token}` } : undefined,
  lazy: false,
  retryAttempts: 0,
  on: {
    ping: (received) => {
      if (received) pings++;
    },
    closed: (ev) => {
      closed = ev;
    },
  },
});

function run(query) {
  return new Promise((resolve) => {
    const got = { next: [], error: null, complete: false };
    client.subscribe(
      { query },
      {
        next: (v) => got.next.push(v),
        error: (e) => {
          got.error = e;
          resolve(got);
        },
        complete: () => {
          got.complete = true;
          resolve(got);
        },
      },
    );
  });
}

// A query: one next, then complete.
const ok = await run('{ __typename }');
if (ok.error || !ok.complete || ok.next.length !== 1 || ok.next[0].data.__typename !== 'Query') {
  fail(`query: ${JSON.stringify(ok)}`);
}
// A validation error: the error sink gets the GraphQLError list, no next.
const bad = await run('{ noSuchField }');
if (!Array.isArray(bad.error) || bad.error.length === 0 || !bad.error[0].message || bad.next.length !== 0) {
  fail(`validation error: ${JSON.stringify(bad)}`);
}
if (bad.error[0].extensions?.code !== 'BAD_INPUT') fail(`validation error code: ${JSON.stringify(bad.error)}`);
// @defer is not in the schema: refused the same way.
const deferred = await run('{ ... @defer { __typename } }');
if (!Array.isArray(deferred.error) || !/Unknown directive/.test(deferred.error[0].message)) {
  fail(`@defer: ${JSON.stringify(deferred)}`);
}
// The server pings every second; the client answers with pong, so after
// 3.5 s the socket is still open and at least 3 pings arrived.
await new Promise((r) => setTimeout(r, 3500));
if (pings < 3) fail(`${pings} server pings in 3.5 s, want 3 or more`);
if (closed) fail(`socket closed: ${closed.code} ${closed.reason}`);
const again = await run('{ __typename }');
if (!again.complete) fail(`query after pings: ${JSON.stringify(again)}`);
await client.dispose();
console.log(`ok: next+complete, error for validation and @defer, ${pings} server pings answered`);
