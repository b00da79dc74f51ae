// Foya web: the transport. GraphQL POST (queries, mutations, multipart
// uploads), graphql-transport-ws (subscriptions over one socket that
// reconnects), asking for the bearer token when the kernel refuses it, and
// the error banner.
import { $ } from './dom.js';

// boot.js (a classic script that ran first) holds the token and the request.
const { endpoint, post, setToken } = window.foyaBoot;
export const { token } = window.foyaBoot;
// ---- token flow: ask when the kernel answers UNAUTHENTICATED; sessionStorage only.
export function askToken(refused) {
  const t = window.prompt((refused ? 'The kernel refused the token (was it rotated?).\n' : '') +
    'This kernel requires its bearer token: run "foya web" where the kernel runs for a link that holds it, or "foya token show". It is kept in this tab only.');
  if (!t || !t.trim()) return false;
  setToken(t.trim());
  return true;
}

export class GraphQLError extends Error {
  constructor(errors) { super(errors.map((e) => e.message).join('; ')); this.errors = errors; }
  get code() { return (this.errors[0] && this.errors[0].extensions && this.errors[0].extensions.code) || ''; }
}

export async function gql(query, variables) {
  for (let attempt = 0; ; attempt++) {
    const t = token();
    const body = await post(query, variables);
    const unauth = body.errors && body.errors.some((e) => e.extensions && e.extensions.code === 'UNAUTHENTICATED');
    if (unauth && attempt < 3 && askToken(t !== '')) continue;
    if (body.errors && body.errors.length) throw new GraphQLError(body.errors);
    if (/^\s*mutation\b/.test(query)) clearError();
    return body.data;
  }
}

// multipart: one file as variables.f (the GraphQL multipart request spec).
export async function multipart(query, variables, file) {
  for (let attempt = 0; ; attempt++) {
    const fd = new FormData();
    fd.append('operations', JSON.stringify({ query, variables: Object.assign({}, variables, { f: null }) }));
    fd.append('map', JSON.stringify({ 0: ['variables.f'] }));
    fd.append('0', file, file.name);
    const headers = {}; const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    const resp = await fetch(endpoint, { method: 'POST', headers, body: fd });
    let body;
    try { body = await resp.json(); } catch (e) { throw new Error('upload: kernel answered HTTP ' + resp.status); }
    const unauth = body.errors && body.errors.some((e) => e.extensions && e.extensions.code === 'UNAUTHENTICATED');
    if (unauth && attempt < 3 && askToken(t !== '')) continue;
    if (body.errors && body.errors.length) throw new GraphQLError(body.errors);
    return body.data;
  }
}

// ---- graphql-transport-ws: one socket, many subscriptions, reconnects.
export const ws = {
  sock: null, acked: false, subs: new Map(), nextId: 1, retry: 0,
  connect() {
    const url = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + endpoint;
    const s = new WebSocket(url, 'graphql-transport-ws');
    this.sock = s; this.acked = false;
    s.onopen = () => s.send(JSON.stringify({ type: 'connection_init', payload: token() ? { authorization: 'Bearer ' + token() } : {} }));
    s.onmessage = (ev) => {
      // A socket replaced by a newer one says nothing more (its ack would
      // start the subscriptions on the newer one before it is open).
      if (this.sock !== s) { s.close(); return; }
      let m; try { m = JSON.parse(ev.data); } catch (e) { return; }
      if (m.type === 'connection_ack') {
        this.acked = true; this.retry = 0; setOnline(true);
        for (const [id, sub] of this.subs) this.start(id, sub);
      } else if (m.type === 'ping') {
        s.send(JSON.stringify({ type: 'pong' }));
      } else if (m.type === 'next') {
        const sub = this.subs.get(m.id);
        if (sub) { if (m.payload.errors) sub.onError(new GraphQLError(m.payload.errors)); else sub.onData(m.payload.data); }
      } else if (m.type === 'error') {
        const sub = this.subs.get(m.id);
        if (sub) { this.subs.delete(m.id); sub.onError(new GraphQLError(m.payload)); }
      } else if (m.type === 'complete') {
        const sub = this.subs.get(m.id);
        if (sub) { this.subs.delete(m.id); if (sub.onComplete) sub.onComplete(); }
      }
    };
    s.onclose = (ev) => {
      if (this.sock !== s) return;
      this.sock = null; this.acked = false; setOnline(false);
      if (ev.code === 4403 && !askToken(token() !== '')) return;
      const delay = Math.min(5000, 250 * Math.pow(2, this.retry++));
      // A subscribe meanwhile may have connected already: one socket.
      setTimeout(() => { if (!this.sock) this.connect(); }, delay);
    };
  },
  start(id, sub) {
    const variables = typeof sub.variables === 'function' ? sub.variables() : sub.variables;
    this.sock.send(JSON.stringify({ id, type: 'subscribe', payload: { query: sub.query, variables } }));
  },
  subscribe(query, variables, onData, onError) {
    const id = String(this.nextId++);
    const sub = { query, variables, onData, onError: onError || ((e) => showError(e)) };
    this.subs.set(id, sub);
    if (!this.sock) this.connect(); else if (this.acked) this.start(id, sub);
    return () => {
      if (this.subs.delete(id) && this.sock && this.acked) this.sock.send(JSON.stringify({ id, type: 'complete' }));
    };
  },
};

export function setOnline(on) { $('status').textContent = on ? '' : 'Offline: reconnecting to the kernel…'; document.body.dataset.online = on ? 'yes' : 'no'; }
// Errors go to a dismissable alert above the conversation; the next change
// that succeeds (any mutation) clears it, so a stale error never lingers.
export function showError(e) {
  $('errortext').textContent = String(e && e.message || e);
  $('error').hidden = false;
}
export function clearError() { $('error').hidden = true; $('errortext').textContent = ''; }
$('errorclose').onclick = () => { clearError(); $('input').focus(); };
