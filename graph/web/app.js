// Foya web: a chat client that speaks only the kernel's public API — GraphQL
// POST for queries and mutations, graphql-transport-ws for subscriptions.
// No framework, no build step, no network beyond the kernel.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const endpoint = '/graphql';
  const tokenKey = 'foya-token';
  const token = () => sessionStorage.getItem(tokenKey) || '';
  const state = { session: null, lastSeq: 0, sessions: new Map(), live: null, sub: null, phase: 'IDLE' };

  // ---- token flow: ask when the kernel answers UNAUTHENTICATED; sessionStorage only.
  function askToken(refused) {
    const t = window.prompt((refused ? 'The kernel refused the token (was it rotated?).\n' : '') +
      'This kernel requires its bearer token: run "foya token show" where the kernel runs. It is kept in this tab only.');
    if (!t || !t.trim()) return false;
    sessionStorage.setItem(tokenKey, t.trim());
    return true;
  }

  class GraphQLError extends Error {
    constructor(errors) { super(errors.map((e) => e.message).join('; ')); this.errors = errors; }
    get code() { return (this.errors[0] && this.errors[0].extensions && this.errors[0].extensions.code) || ''; }
  }

  async function gql(query, variables) {
    for (let attempt = 0; ; attempt++) {
      const headers = { 'Content-Type': 'application/json' };
      const t = token();
      if (t) headers.Authorization = 'Bearer ' + t;
      const resp = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables: variables || {} }) });
      let body;
      try { body = await resp.json(); } catch (e) { throw new Error('kernel answered HTTP ' + resp.status); }
      const unauth = body.errors && body.errors.some((e) => e.extensions && e.extensions.code === 'UNAUTHENTICATED');
      if (unauth && attempt < 3 && askToken(t !== '')) continue;
      if (body.errors && body.errors.length) throw new GraphQLError(body.errors);
      return body.data;
    }
  }

  // ---- graphql-transport-ws: one socket, many subscriptions, reconnects.
  const ws = {
    sock: null, acked: false, subs: new Map(), nextId: 1, retry: 0,
    connect() {
      const url = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + endpoint;
      const s = new WebSocket(url, 'graphql-transport-ws');
      this.sock = s; this.acked = false;
      s.onopen = () => s.send(JSON.stringify({ type: 'connection_init', payload: token() ? { authorization: 'Bearer ' + token() } : {} }));
      s.onmessage = (ev) => {
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
        setTimeout(() => this.connect(), delay);
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

  function setOnline(on) { $('status').textContent = on ? '' : 'Offline: reconnecting to the kernel…'; document.body.dataset.online = on ? 'yes' : 'no'; }
  function showError(e) { $('status').textContent = String(e && e.message || e); }

  // ---- safe Markdown: escape everything, then add code blocks, inline code, bold, italics, links.
  const esc = (s) => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  function inline(s) {
    return s.replace(/`([^`\n]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
      .replace(/(^|[\s(])\*([^*\n]+)\*/g, '$1<em>$2</em>')
      .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)"]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
  }
  function markdown(src) {
    const parts = String(src || '').split(/```/);
    let html = '';
    parts.forEach((p, i) => {
      if (i % 2 === 1) {
        const nl = p.indexOf('\n');
        const lang = nl > 0 ? p.slice(0, nl).trim() : '';
        const code = nl >= 0 ? p.slice(nl + 1) : p;
        html += '<pre><code' + (lang ? ' data-lang="' + esc(lang) + '"' : '') + '>' + esc(code.replace(/\n$/, '')) + '</code></pre>';
      } else {
        html += esc(p).split(/\n{2,}/).filter((b) => b.trim()).map((b) => {
          const h = b.match(/^(#{1,6}) (.*)$/);
          if (h) return '<h' + (h[1].length + 2 > 6 ? 6 : h[1].length + 2) + '>' + inline(h[2]) + '</h' + Math.min(6, h[1].length + 2) + '>';
          if (/^\s*[-*] /.test(b)) return '<ul>' + b.split('\n').map((l) => '<li>' + inline(l.replace(/^\s*[-*] /, '')) + '</li>').join('') + '</ul>';
          return '<p>' + inline(b).replace(/\n/g, '<br>') + '</p>';
        }).join('');
      }
    });
    return html;
  }
  function diffHTML(d) {
    return '<pre class="diff">' + String(d).split('\n').map((l) => {
      const c = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : '';
      return c ? '<span class="' + c + '">' + esc(l) + '</span>' : esc(l);
    }).join('\n') + '</pre>';
  }

  // ---- conversation rendering
  const S_FIELDS = 'id title pinned phase updatedAt parentId';
  const MSG_FIELDS = 'seq role text reasoning toolCalls { id name input } toolCallId toolName isError diff interrupted turnStatus turnReason';
  function el(tag, cls, html) { const e = document.createElement(tag); if (cls) e.className = cls; if (html != null) e.innerHTML = html; return e; }
  function renderMessage(m) {
    const role = String(m.role).toLowerCase();
    const div = el('div', 'msg ' + role + (m.isError ? ' error' : ''));
    div.dataset.seq = m.seq;
    let html = '<div class="role">' + esc(role === 'tool' ? 'tool result' + (m.toolName ? ': ' + m.toolName : '') : role === 'system' ? 'system context' : role) + '</div>';
    if (m.reasoning) html += '<details class="reasoning"><summary>Reasoning</summary>' + markdown(m.reasoning) + '</details>';
    if (role === 'tool') {
      html += m.diff ? diffHTML(m.diff) : '';
      html += '<pre><code>' + esc(m.text) + '</code></pre>';
    } else {
      html += '<div class="text">' + markdown(m.text) + '</div>';
    }
    for (const tc of m.toolCalls || []) {
      html += '<div class="toolcall"><strong>' + esc(tc.name) + '</strong><pre><code>' + esc(JSON.stringify(tc.input, null, 2)) + '</code></pre></div>';
    }
    if (role === 'assistant' && m.seq) html += '<button type="button" class="fork">Fork from here</button>';
    if (m.interrupted) html += '<div class="interrupted">Interrupted</div>';
    if (m.turnStatus && m.turnStatus !== 'COMPLETED' && m.turnReason) html += '<div class="interrupted">' + esc(m.turnStatus + ': ' + m.turnReason) + '</div>';
    div.innerHTML = html;
    const fork = div.querySelector('button.fork');
    if (fork) fork.onclick = async () => {
      try {
        const d = await gql('mutation($s: ID!, $a: Int!) { forkSession(sessionId: $s, afterSeq: $a) { ' + S_FIELDS + ' } }', { s: state.session, a: m.seq });
        state.sessions.set(d.forkSession.id, d.forkSession); renderSessions();
        await openSession(d.forkSession.id);
      } catch (e) { showError(e); }
    };
    return div;
  }
  function scroll() { const log = $('log'); log.scrollTop = log.scrollHeight; }
  function appendMessage(m) {
    const log = $('log');
    if (log.querySelector('.msg[data-seq="' + m.seq + '"]')) return;
    if (state.live) { state.live.remove(); state.live = null; }
    log.appendChild(renderMessage(m));
    scroll();
  }
  function liveBubble() {
    if (!state.live) {
      state.live = el('div', 'msg assistant streaming');
      state.live.innerHTML = '<div class="role">assistant</div><details class="reasoning" hidden><summary>Reasoning</summary><div class="r"></div></details><div class="text"></div>';
      state.live.dataset.text = ''; state.live.dataset.reasoning = '';
      $('log').appendChild(state.live);
    }
    return state.live;
  }
  function approvalCard(a) {
    if (document.querySelector('.approval[data-request="' + a.requestId + '"]')) return;
    const card = el('div', 'approval');
    card.dataset.request = a.requestId;
    card.setAttribute('role', 'group');
    card.setAttribute('aria-label', 'Approval: ' + a.tool);
    card.innerHTML = '<div><strong>' + esc(a.tool) + '</strong> wants to ' + esc(a.action) + '</div><pre><code>' + esc(a.summary) + '</code></pre><div class="buttons"></div>';
    const sid = state.session;
    for (const [label, decision] of [['Approve', 'APPROVED'], ['Approve for session', 'APPROVED_FOR_SESSION'], ['Deny', 'DENIED']]) {
      const b = el('button'); b.type = 'button'; b.textContent = label;
      b.onclick = async () => {
        card.querySelectorAll('button').forEach((x) => { x.disabled = true; });
        try { await gql('mutation($s: ID!, $r: ID!, $d: ApprovalDecision!) { resolveApproval(sessionId: $s, requestId: $r, decision: $d) }', { s: sid, r: a.requestId, d: decision }); }
        catch (e) { showError(e); card.querySelectorAll('button').forEach((x) => { x.disabled = false; }); }
      };
      card.querySelector('.buttons').appendChild(b);
    }
    $('log').appendChild(card);
    card.querySelector('button').focus({ preventScroll: true });
    scroll();
  }
  function setPhase(p) {
    state.phase = p || 'IDLE';
    $('phase').textContent = state.phase.toLowerCase().replace(/_/g, ' ');
    $('stop').disabled = !state.session || state.phase === 'IDLE';
  }
  function renderQueue(q) {
    const list = $('queuelist'); list.innerHTML = '';
    for (const it of q || []) {
      const li = el('li'); li.textContent = it.text;
      const del = el('button'); del.type = 'button'; del.textContent = 'Remove'; del.setAttribute('aria-label', 'Remove queued message');
      del.onclick = () => gql('mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }', { s: state.session, i: it.id }).catch(showError);
      li.append(' ', del); list.appendChild(li);
    }
    $('queue').hidden = !(q && q.length);
  }

  function onSessionEvent(ev) {
    if (ev.seq != null) {
      if (ev.seq <= state.lastSeq) return; // already shown (resumed subscription)
      state.lastSeq = ev.seq;
    }
    switch (ev.type) {
      case 'message_delta': {
        const b = liveBubble(); b.dataset.text += ev.delta || '';
        b.querySelector('.text').innerHTML = markdown(b.dataset.text); scroll(); break;
      }
      case 'reasoning_delta': {
        const b = liveBubble(); b.dataset.reasoning += ev.delta || '';
        const d = b.querySelector('details'); d.hidden = false; d.querySelector('.r').innerHTML = markdown(b.dataset.reasoning); break;
      }
      case 'message_end': case 'message_imported':
        if (ev.message) appendMessage(ev.message); break;
      case 'approval_requested':
        if (ev.approval) approvalCard(ev.approval); break;
      case 'approval_resolved': {
        const c = ev.approval && document.querySelector('.approval[data-request="' + ev.approval.requestId + '"]');
        if (c) { c.querySelector('.buttons').textContent = 'Decision: ' + String(ev.approval.decision || '').toLowerCase().replace(/_/g, ' '); c.classList.add('resolved'); }
        break;
      }
      case 'phase_changed': setPhase(ev.phase); break;
      case 'queue_snapshot': renderQueue(ev.queue); break;
      case 'turn_finished': if (state.live) { state.live.classList.remove('streaming'); } break;
      case 'session_deleted': openSession(null); break;
      case 'history_rewound': case 'compaction_checkpoint': case 'resync_required': openSession(state.session); break;
    }
  }

  async function openSession(id) {
    if (state.sub) { state.sub(); state.sub = null; }
    state.session = id; state.lastSeq = 0; state.live = null;
    $('log').innerHTML = '';
    for (const b of document.querySelectorAll('#sessions button.s')) b.setAttribute('aria-current', String(b.dataset.id === id));
    const on = !!id;
    for (const x of ['input', 'send', 'pin', 'rename', 'delete', 'compact']) $(x).disabled = !on;
    $('pin').setAttribute('aria-pressed', String(!!(on && state.sessions.get(id) && state.sessions.get(id).pinned)));
    if (!id) { $('title').textContent = 'No session'; setPhase('IDLE'); renderQueue([]); history.replaceState(null, '', '/'); return; }
    history.replaceState(null, '', '#' + id);
    const d = await gql('query($id: ID!) { session(id: $id) { id title model phase headSeq queue { id text } messages { ' + MSG_FIELDS + ' } } }', { id });
    if (state.session !== id) return;
    const s = d.session;
    $('title').textContent = s.title || s.id;
    for (const m of s.messages) appendMessage(m);
    state.lastSeq = s.headSeq;
    setPhase(s.phase); renderQueue(s.queue);
    const EV = 'subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, afterSeq: $a) { seq type delta phase message { ' + MSG_FIELDS + ' } approval { requestId tool action summary decision } queue { id text } } }';
    // variables are recomputed on every (re)subscribe: a reconnect resumes after the last seq shown.
    state.sub = ws.subscribe(EV, () => ({ s: id, a: state.lastSeq }), (data) => onSessionEvent(data.sessionEvents));
    $('input').focus();
  }

  // ---- sidebar
  function renderSessions() {
    const ul = $('sessions'); ul.innerHTML = '';
    const list = [...state.sessions.values()].filter((s) => !s.parentId)
      .sort((a, b) => (b.pinned - a.pinned) || String(b.updatedAt).localeCompare(String(a.updatedAt)));
    for (const s of list) {
      const li = el('li'); const b = el('button', 's'); b.type = 'button'; b.dataset.id = s.id;
      b.setAttribute('aria-current', String(s.id === state.session));
      b.innerHTML = '<span>' + esc(s.title || s.id) + '</span><span class="ph">' + esc(String(s.phase).toLowerCase()) + '</span>';
      b.onclick = () => openSession(s.id).catch(showError);
      li.appendChild(b); ul.appendChild(li);
    }
  }
  async function loadSidebar() {
    const d = await gql('{ sessions { ' + S_FIELDS + ' } projects { id name path } connections { id name baseUrl models { id } } }');
    state.sessions = new Map(d.sessions.map((s) => [s.id, s]));
    renderSessions();
    const ps = $('project'); ps.length = 1;
    for (const p of d.projects) { const o = el('option'); o.value = p.id; o.textContent = p.name || p.path; ps.appendChild(o); }
    const ms = $('model'); const keep = ms.value; ms.length = 1;
    for (const c of d.connections) for (const m of c.models) { const o = el('option'); o.value = c.id + '|' + m.id; o.textContent = c.name + '/' + m.id; ms.appendChild(o); }
    ms.value = keep;
    const cl = $('connlist'); cl.innerHTML = '';
    for (const c of d.connections) { const li = el('li'); li.textContent = c.name + ' (' + c.models.map((m) => m.id).join(', ') + ')'; cl.appendChild(li); }
  }
  function watchKernel() {
    ws.subscribe('subscription { kernelEvents { type sessionId session { ' + S_FIELDS + ' } } }', {}, (data) => {
      const e = data.kernelEvents;
      if (e.type === 'session_deleted') { state.sessions.delete(e.sessionId); if (e.sessionId === state.session) openSession(null); }
      else if (e.session) {
        state.sessions.set(e.session.id, e.session);
        if (e.session.id === state.session) {
          if (e.session.title) $('title').textContent = e.session.title;
          $('pin').setAttribute('aria-pressed', String(!!e.session.pinned));
        }
      }
      if (e.type === 'catalog_updated') loadSidebar().catch(showError); else renderSessions();
    });
  }

  // ---- controls
  async function send() {
    const text = $('input').value;
    if (!state.session || !text.trim()) return;
    $('input').value = '';
    try { await gql('mutation($s: ID!, $t: String!) { sendMessage(sessionId: $s, input: {text: $t}) { turnStarted } }', { s: state.session, t: text }); }
    catch (e) { $('input').value = text; showError(e); }
  }
  $('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $('stop').onclick = () => gql('mutation($s: ID!) { stopTurn(sessionId: $s) { id } }', { s: state.session }).catch(showError);
  $('new').onclick = async () => {
    try {
      const input = { approvalMode: $('mode').value };
      if ($('newtitle').value.trim()) input.title = $('newtitle').value.trim();
      $('newtitle').value = '';
      if ($('project').value) input.projectId = $('project').value;
      if ($('model').value) { const [c, m] = $('model').value.split('|'); input.connectionId = c; input.model = m; }
      const d = await gql('mutation($i: CreateSessionInput!) { createSession(input: $i) { ' + S_FIELDS + ' } }', { i: input });
      state.sessions.set(d.createSession.id, d.createSession); renderSessions();
      await openSession(d.createSession.id);
    } catch (e) { showError(e); }
  };
  $('pin').onclick = () => gql('mutation($s: ID!, $p: Boolean) { updateSession(id: $s, input: {pinned: $p}) { id } }',
    { s: state.session, p: $('pin').getAttribute('aria-pressed') !== 'true' }).catch(showError);
  $('rename').onclick = async () => {
    const t = window.prompt('New title', $('title').textContent);
    if (t != null) gql('mutation($s: ID!, $t: String) { updateSession(id: $s, input: {title: $t}) { id } }', { s: state.session, t }).catch(showError);
  };
  $('delete').onclick = () => {
    if (window.confirm('Delete this session and its history?')) gql('mutation($s: ID!) { deleteSession(id: $s) }', { s: state.session }).catch(showError);
  };
  $('compact').onclick = () => gql('mutation($s: ID!) { compactSession(sessionId: $s) { id } }', { s: state.session }).catch(showError);
  $('connform').addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    const models = String(f.get('models') || '').split(',').map((m) => m.trim()).filter(Boolean).map((id) => ({ id }));
    const input = { name: f.get('name'), baseUrl: f.get('baseUrl') };
    if (f.get('apiKey')) input.apiKey = f.get('apiKey');
    if (models.length) input.models = models;
    try { await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id } }', { i: input }); e.target.reset(); await loadSidebar(); }
    catch (err) { showError(err); }
  });

  window.foyaWeb = { gql, ws, state };
  loadSidebar().then(() => {
    watchKernel();
    const id = location.hash.slice(1);
    if (id && state.sessions.has(id)) return openSession(id);
  }).catch(showError);
})();
