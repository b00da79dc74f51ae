// Foya web: a chat client that speaks only the kernel's public API — GraphQL
// POST for queries and mutations, graphql-transport-ws for subscriptions.
// No framework, no build step, no network beyond the kernel.
(function () {
  'use strict';
  performance.mark('foya:script-start');
  const $ = (id) => document.getElementById(id);
  const endpoint = '/graphql';
  const tokenKey = 'foya-token';
  const token = () => sessionStorage.getItem(tokenKey) || '';
  // A web link (`foya web`, or the kernel's log on loopback) carries the
  // token in the fragment, #token=…, which browsers never send to a server:
  // keep it in this tab's sessionStorage, and take it off the address bar
  // and out of the history at once.
  if (location.hash.startsWith('#token=')) {
    const t = new URLSearchParams(location.hash.slice(1)).get('token');
    if (t && t.trim()) sessionStorage.setItem(tokenKey, t.trim());
    history.replaceState(null, '', location.pathname + location.search);
  }
  const state = { session: null, lastSeq: 0, sessions: new Map(), live: null, sub: null, phase: 'IDLE', queue: [], attachments: [], editing: null, gen: 0 };
  const S_FIELDS = 'id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path }';
  // A page of history carries at most TEXT_PAGE bytes of each text (textBytes
  // says how long it is); the rest is read on request with text(offset:, limit:).
  const TEXT_PAGE = 262144, HISTORY_PAGE = 50;
  const MSG_FIELDS = 'seq role text(limit: ' + TEXT_PAGE + ') textBytes source reasoning toolCalls { id name input } toolCallId toolName isError diff interrupted turnStatus turnReason finishReason refusal attachments { id name kind size }';
  const ATT_FIELDS = 'id name kind mediaType size';
  // The usage meters come in a query of their own (refreshUsage), after the
  // messages are on screen: counting the context of a long session is the
  // slow part of reading it.
  const SESSION_Q = 'query($id: ID!) { session(id: $id) { id title connectionId model approvalMode phase headSeq queue { id text truncated attachments { id } } messages(last: ' + HISTORY_PAGE + ') { ' + MSG_FIELDS + ' } } }';
  // A session named in the address is asked for before the rest of the
  // script runs (the first paint of a long session); openSession takes it.
  let prefetched = null;
  if (/^#ses_[\w-]+$/.test(location.hash)) {
    const id = location.hash.slice(1);
    prefetched = { id, data: gql(SESSION_Q, { id }) };
    prefetched.data.catch(() => { /* openSession asks again */ });
  }

  // ---- token flow: ask when the kernel answers UNAUTHENTICATED; sessionStorage only.
  function askToken(refused) {
    const t = window.prompt((refused ? 'The kernel refused the token (was it rotated?).\n' : '') +
      'This kernel requires its bearer token: run "foya web" where the kernel runs for a link that holds it, or "foya token show". It is kept in this tab only.');
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
      if (/^\s*mutation\b/.test(query)) clearError();
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
  // Errors go to a dismissable alert above the conversation; the next change
  // that succeeds (any mutation) clears it, so a stale error never lingers.
  function showError(e) {
    $('errortext').textContent = String(e && e.message || e);
    $('error').hidden = false;
  }
  function clearError() { $('error').hidden = true; $('errortext').textContent = ''; }
  $('errorclose').onclick = () => { clearError(); $('input').focus(); };

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
        html += '<div class="codeblock"><button type="button" class="copy" aria-label="Copy code">Copy</button><pre><code class="hl"' + (lang ? ' data-lang="' + esc(lang) + '"' : '') + '>' + highlight(code.replace(/\n$/, ''), lang) + '</code></pre></div>';
      } else {
        html += esc(p).split(/\n{2,}/).filter((b) => b.trim()).map((b) => {
          const h = b.match(/^(#{1,6}) (.*)$/);
          if (h) return '<h' + (h[1].length + 2 > 6 ? 6 : h[1].length + 2) + '>' + inline(h[2]) + '</h' + Math.min(6, h[1].length + 2) + '>';
          if (isTable(b)) return table(b);
          if (/^\s*[-*] /.test(b)) return '<ul>' + b.split('\n').map((l) => listItem(l.replace(/^\s*[-*] /, ''))).join('') + '</ul>';
          if (/^\s*\d+[.)] /.test(b)) return '<ol>' + b.split('\n').map((l) => listItem(l.replace(/^\s*\d+[.)] /, ''))).join('') + '</ol>';
          return '<p>' + inline(b).replace(/\n/g, '<br>') + '</p>';
        }).join('');
      }
    });
    return html;
  }
  // Task list items ("[ ] " / "[x] ") get a mark that says their state.
  function listItem(l) {
    const m = l.match(/^\[([ xX])\] (.*)$/);
    if (!m) return '<li>' + inline(l) + '</li>';
    const done = m[1] !== ' ';
    return '<li class="task"><span class="check" role="img" aria-label="' + (done ? 'Done' : 'To do') + '">' + (done ? '☑' : '☐') + '</span> ' + inline(m[2]) + '</li>';
  }
  // GitHub-style tables: a header row, a |---|:--:| row, then the body rows.
  const tableSep = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
  function isTable(b) { const ls = b.split('\n'); return ls.length >= 2 && ls[0].includes('|') && tableSep.test(ls[1]); }
  function cells(l) { return l.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim()); }
  function table(b) {
    const ls = b.split('\n');
    const align = cells(ls[1]).map((c) => c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : '');
    const cell = (tag, c, i) => '<' + tag + (align[i] ? ' class="a-' + align[i] + '"' : '') + '>' + inline(c) + '</' + tag + '>';
    return '<div class="tablewrap"><table><thead><tr>' + cells(ls[0]).map((c, i) => cell('th', c, i)).join('') + '</tr></thead><tbody>' +
      ls.slice(2).filter((l) => l.trim()).map((l) => '<tr>' + cells(l).map((c, i) => cell('td', c, i)).join('') + '</tr>').join('') + '</tbody></table></div>';
  }
  // ---- a tiny syntax highlighter: comments, strings, numbers and keywords of
  // common languages. Works on raw text and escapes every piece it emits.
  const KEYWORDS = new Set(('break case catch class const continue def default defer delete do elif else enum export extends ' +
    'false finally fn for from func function go if impl import in interface let match mod module new nil none null package pass ' +
    'private pub public raise return select self static struct super switch this throw true try type typeof undefined use var ' +
    'void while with yield async await lambda not and or is as None True False echo fi then esac done local').split(' '));
  const HASH_COMMENTS = /^(py|python|sh|bash|shell|zsh|console|yaml|yml|toml|rb|ruby|perl|r|make|makefile|dockerfile|conf|ini)$/i;
  const STR = String.raw`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|` + '`[^`]*`';
  const TAIL = String.raw`|\b(\d+(?:\.\d+)?(?:e[+-]?\d+)?|0x[0-9a-f]+)\b|\b([A-Za-z_][A-Za-z0-9_]*)\b`;
  const HL = {
    c: new RegExp(String.raw`(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|(` + STR + ')' + TAIL, 'gi'),
    hash: new RegExp(String.raw`(#[^\n]*)|(` + STR + ')' + TAIL, 'gi'),
    sql: new RegExp(String.raw`(--[^\n]*|\/\*[\s\S]*?\*\/)|(` + STR + ')' + TAIL, 'gi'),
  };
  function highlight(code, lang) {
    const re = HL[HASH_COMMENTS.test(lang || '') ? 'hash' : /^(sql|lua|haskell|hs)$/i.test(lang || '') ? 'sql' : 'c'];
    re.lastIndex = 0;
    let out = '', last = 0, m;
    while ((m = re.exec(code))) {
      out += esc(code.slice(last, m.index));
      const cls = m[1] ? 'c' : m[2] ? 's' : m[3] ? 'n' : KEYWORDS.has(m[4]) ? 'k' : '';
      out += cls ? '<span class="tok-' + cls + '">' + esc(m[0]) + '</span>' : esc(m[0]);
      last = re.lastIndex;
    }
    return out + esc(code.slice(last));
  }
  // diffHTML: a unified diff, one block per line, additions, deletions and
  // hunk headers coloured (and marked for screen readers by their +, -, @@).
  function diffHTML(d) {
    return '<div class="tlabel">Diff</div><pre class="diff" aria-label="Diff">' + String(d).replace(/\n$/, '').split('\n').map((l) => {
      const c = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : 'ctx';
      return '<span class="' + c + '">' + (esc(l) || ' ') + '</span>';
    }).join('') + '</pre>';
  }

  // ---- conversation rendering
  function el(tag, cls, html) { const e = document.createElement(tag); if (cls) e.className = cls; if (html != null) e.innerHTML = html; return e; }
  function renderMessage(m) {
    const role = String(m.role).toLowerCase();
    // An assistant message that only calls tools is its cards, without a bubble.
    const callsOnly = role === 'assistant' && !m.text && !m.reasoning && (m.toolCalls || []).length;
    const div = el('div', 'msg ' + role + (m.isError ? ' error' : '') + (callsOnly ? ' calls' : ''));
    div.dataset.seq = m.seq;
    let html = '<div class="role">' + esc(role === 'tool' ? 'tool result' + (m.toolName ? ': ' + m.toolName : '') : role === 'system' ? 'system context' : role) + '</div>';
    if (m.reasoning) html += '<details class="reasoning"><summary>Reasoning</summary>' + markdown(m.reasoning) + '</details>';
    const shown = utf8Len(m.text || '');
    const more = m.seq && m.textBytes > shown ? '<button type="button" class="moretext">Show the whole text (' + fmtBytes(m.textBytes) + '; ' + fmtBytes(shown) + ' shown)</button>' : '';
    if (role === 'tool') {
      // A tool result goes into its call's card in the assistant message
      // (linkTools); until that message is shown it is a card of its own.
      const st = toolStatus(m);
      div.dataset.call = m.toolCallId || '';
      const result = '<div class="result" data-status="' + st + '">' + (m.diff ? diffHTML(m.diff) : '') + '<div class="tlabel">Output</div><pre class="out"><code>' + esc(m.text) + '</code></pre>' + more + '</div>';
      html += '<details class="toolcall orphan" data-status="' + st + '"><summary>' + toolSummary(m.toolName || 'tool', '', st) + '</summary><div class="tbody">' + result + '</div></details>';
    } else {
      if (!callsOnly) html += '<div class="text">' + markdown(m.text) + '</div>' + more;
    }
    for (const tc of m.toolCalls || []) {
      html += '<details class="toolcall" data-call="' + esc(tc.id) + '" data-status="running"><summary>' + toolSummary(tc.name, argSummary(tc.input), 'running') + '</summary>' +
        '<div class="tbody"><div class="tin"><div class="tlabel">Input</div><pre><code>' + esc(JSON.stringify(tc.input, null, 2)) + '</code></pre></div></div></details>';
    }
    if ((m.attachments || []).length) html += '<ul class="atts">' + m.attachments.map((a) => '<li>' + esc(a.name) + ' <small>(' + esc(a.kind) + ', ' + fmtBytes(a.size) + ')</small></li>').join('') + '</ul>';
    // Actions show on hover and keyboard focus (CSS), not as permanent buttons.
    let acts = '';
    if (m.seq && m.text && role !== 'tool') acts += '<button type="button" class="copymsg" aria-label="Copy message">Copy</button>';
    if (role === 'assistant' && m.seq && !m.interrupted && !(m.toolCalls || []).length) acts += '<button type="button" class="fork">Fork from here</button>';
    if (role === 'user' && m.seq) acts += '<button type="button" class="edit" aria-label="Edit this message" title="Edit and resend">Edit</button><button type="button" class="rewind">Rewind to here</button>';
    if (acts) html += '<div class="actions">' + acts + '</div>';
    if (m.interrupted) html += '<div class="interrupted">Interrupted</div>';
    if (m.finishReason === 'refusal') html += '<div class="refusal">Refused' + (m.refusal ? ': ' + esc(m.refusal) : ' (the model gave no explanation)') + '</div>';
    else if (m.finishReason === 'content_filter') html += '<div class="refusal">Stopped by the provider\'s content filter</div>';
    if (m.turnStatus && m.turnStatus !== 'COMPLETED' && m.turnReason) html += '<div class="interrupted">' + esc(m.turnStatus + ': ' + m.turnReason) + '</div>';
    div.innerHTML = html;
    const moreBtn = div.querySelector('button.moretext');
    if (moreBtn) moreBtn.onclick = async () => {
      moreBtn.disabled = true;
      try {
        const text = await wholeText(state.session, m.seq, m.textBytes);
        const t = role === 'tool' ? moreBtn.parentElement.querySelector('pre.out code') : div.querySelector('.text');
        if (role === 'tool') t.textContent = text; else t.innerHTML = markdown(text);
        moreBtn.remove();
      } catch (e) { moreBtn.disabled = false; showError(e); }
    };
    const cp = div.querySelector('button.copymsg');
    if (cp) cp.onclick = () => copyText(m.text, cp);
    const rw = div.querySelector('button.rewind');
    if (rw) rw.onclick = () => rewind(m.seq).catch(showError);
    const ed = div.querySelector('button.edit');
    if (ed) ed.onclick = () => editMessage(div, m).catch(showError);
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
  // argSummary: the first string arguments of a tool call, short.
  function argSummary(input) {
    if (!input || typeof input !== 'object') return String(input == null ? '' : input).slice(0, 80);
    const parts = [];
    for (const [k, v] of Object.entries(input)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(k + ': ' + String(v).split('\n')[0].slice(0, 60));
      if (parts.length === 2) break;
    }
    return parts.join(', ');
  }
  // ---- tool cards: name, argument summary, status and duration; the body
  // holds the input, the diff (unified, coloured) and the output.
  const STATUS_LABEL = { running: 'running', ok: 'ok', error: 'error', denied: 'denied', stopped: 'stopped', none: 'no result' };
  // toolStatus reads a tool message: a refusal by the person or the
  // approval mode is "denied", a call the stop cut short "stopped".
  function toolStatus(m) {
    if (!m.isError) return 'ok';
    const t = String(m.text || '');
    if (/^(denied|refused|blocked by)\b/.test(t)) return 'denied';
    if (/^not run\b/.test(t)) return 'stopped';
    return 'error';
  }
  function toolSummary(name, args, st) {
    return '<span class="tname">' + esc(name) + '</span>' + (args ? ' <span class="args">' + esc(args) + '</span>' : '') +
      ' <span class="tstate">' + STATUS_LABEL[st] + '</span> <span class="tdur"></span>';
  }
  function setCardStatus(card, st) {
    card.dataset.status = st;
    card.querySelector('.tstate').textContent = STATUS_LABEL[st];
  }
  // fmtDuration: 850 ms, 1.2 s, 2 min 5 s.
  function fmtDuration(ms) {
    if (!(ms >= 0)) return '';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }
  // toolTimes: call id → {start, end} in ms since the epoch, from the
  // tool_started event and the event of the call's tool message.
  const toolTimes = new Map();
  function showDuration(card) {
    const owner = card.closest('.msg.tool');
    const t = toolTimes.get(card.dataset.call || (owner ? owner.dataset.call : ''));
    const d = card.querySelector('.tdur');
    if (!t || t.start == null || t.end == null || !d) return;
    d.textContent = fmtDuration(t.end - t.start);
    d.title = 'From the start of the call to its result (waiting for an approval included)';
  }
  // linkTools moves each tool result shown on its own into its call's card,
  // once the assistant message with the call is in the log. With the
  // session idle, a call still without a result says so.
  function linkTools() {
    const log = $('log');
    for (const tm of log.querySelectorAll('.msg.tool:not(.linked)')) {
      const card = tm.dataset.call && log.querySelector('.msg.assistant details.toolcall[data-call="' + CSS.escape(tm.dataset.call) + '"]');
      if (!card) continue;
      const result = tm.querySelector('.result');
      card.querySelector('.tbody').appendChild(result);
      tm.querySelector('details.toolcall').remove(); // the card of its own, now empty
      setCardStatus(card, result.dataset.status);
      card.dataset.seq = tm.dataset.seq;
      tm.classList.add('linked');
      showDuration(card);
    }
    if (state.phase === 'IDLE') for (const c of log.querySelectorAll('.msg.assistant details.toolcall[data-status=running]')) setCardStatus(c, 'none');
  }
  // toolDurations reads, for the tool rounds in msgs (history), the times of
  // their tool_started events and of their tool messages: one query, after
  // the messages are on screen.
  async function toolDurations(sid, msgs) {
    const rounds = [];
    for (let i = 0; i < msgs.length; i++) {
      const a = msgs[i];
      if (!(a.toolCalls || []).length) continue;
      const ids = new Set(a.toolCalls.map((c) => c.id));
      let last = a.seq;
      for (let j = i + 1; j < msgs.length && ids.size; j++) if (ids.has(msgs[j].toolCallId)) { last = msgs[j].seq; ids.delete(msgs[j].toolCallId); }
      if (last > a.seq && !a.toolCalls.every((c) => toolTimes.has(c.id) && toolTimes.get(c.id).end != null)) rounds.push({ a, limit: Math.min(5000, last - a.seq) });
    }
    if (!rounds.length) return;
    const q = 'query($s: ID!) { ' + rounds.map((r, i) => 'r' + i + ': events(sessionId: $s, afterSeq: ' + r.a.seq + ', limit: ' + r.limit + ') { seq type at }').join(' ') + ' }';
    const d = await gql(q, { s: sid });
    const bySeq = new Map(msgs.map((m) => [m.seq, m]));
    rounds.forEach((r, i) => {
      let k = 0;
      for (const e of d['r' + i] || []) {
        if (e.type === 'tool_started' && k < r.a.toolCalls.length) {
          const id = r.a.toolCalls[k++].id;
          toolTimes.set(id, Object.assign(toolTimes.get(id) || {}, { start: Date.parse(e.at) }));
        } else if (e.type === 'message_end' && bySeq.has(e.seq) && bySeq.get(e.seq).toolCallId) {
          const id = bySeq.get(e.seq).toolCallId;
          toolTimes.set(id, Object.assign(toolTimes.get(id) || {}, { end: Date.parse(e.at) }));
        }
      }
    });
    if (state.session !== sid) return;
    for (const c of $('log').querySelectorAll('details.toolcall')) showDuration(c);
  }

  // copyText copies with the Clipboard API (a secure context: loopback or
  // https), else through a selected textarea; the button says it worked.
  async function copyText(text, btn) {
    let ok = false;
    try { await navigator.clipboard.writeText(text); ok = true; } catch (e) {
      const ta = el('textarea'); ta.value = text; ta.setAttribute('aria-hidden', 'true'); ta.className = 'offscreen';
      document.body.appendChild(ta); ta.select();
      try { ok = document.execCommand('copy'); } catch (e2) { ok = false; }
      ta.remove();
    }
    const was = btn.textContent;
    btn.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { btn.textContent = was; }, 1500);
  }
  $('log').addEventListener('click', (e) => {
    const b = e.target.closest('button.copy');
    if (b) copyText(b.parentElement.querySelector('code').textContent, b);
  });
  function utf8Len(s) { return new TextEncoder().encode(s).length; }
  // wholeText reads a long message text page by page (pages end on character
  // boundaries, so each starts where the previous one ended).
  async function wholeText(sid, seq, total) {
    const parts = []; let got = 0;
    while (got < total) {
      const d = await gql('query($s: ID!, $a: Int!, $o: Int!, $l: Int!) { session(id: $s) { messages(first: 1, afterSeq: $a, includeInactive: true) { text(offset: $o, limit: $l) } } }', { s: sid, a: seq - 1, o: got, l: 1048576 });
      const page = d.session && d.session.messages[0] ? d.session.messages[0].text : '';
      if (!page) break;
      parts.push(page); got += utf8Len(page);
    }
    return parts.join('');
  }
  // earlierButton offers the page of history before the first message shown.
  function earlierButton(id, beforeSeq) {
    const b = el('button', 'earlier'); b.type = 'button'; b.textContent = 'Show earlier messages';
    b.onclick = async () => {
      b.disabled = true;
      try {
        const d = await gql('query($id: ID!, $b: Int!, $n: Int!) { session(id: $id) { messages(last: $n, beforeSeq: $b) { ' + MSG_FIELDS + ' } } }', { id, b: beforeSeq, n: HISTORY_PAGE });
        if (state.session !== id) return;
        const msgs = d.session ? d.session.messages : [];
        const log = $('log'); const anchor = b.nextSibling;
        // Keep what is on screen where it is: the page goes in above it.
        const fromBottom = log.scrollHeight - log.scrollTop;
        b.remove();
        const frag = document.createDocumentFragment();
        for (const m of msgs) if (!log.querySelector('.msg[data-seq="' + m.seq + '"]')) frag.appendChild(renderMessage(m));
        log.insertBefore(frag, anchor);
        linkTools();
        if (msgs.length === HISTORY_PAGE) log.insertBefore(earlierButton(id, msgs[0].seq), log.firstChild);
        log.scrollTop = log.scrollHeight - fromBottom;
        toolDurations(id, msgs).catch(() => { /* durations are optional */ });
      } catch (e) { b.disabled = false; showError(e); }
    };
    // Scrolling back to the top loads the page before it by itself.
    if ('IntersectionObserver' in window) {
      const io = new IntersectionObserver((es) => { if (es.some((x) => x.isIntersecting) && !b.disabled && b.isConnected) b.click(); }, { root: $('log'), rootMargin: '200px 0px 0px 0px' });
      io.observe(b);
      b.addEventListener('click', () => io.disconnect(), { once: true });
    }
    return b;
  }
  function fmtBytes(n) { return n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KB' : (n / 1048576).toFixed(1) + ' MB'; }
  function fmtTokens(n) { return n < 1000 ? String(n) : n < 1e6 ? (n / 1000).toFixed(1) + 'k' : (n / 1e6).toFixed(2) + 'M'; }

  // ---- edit and resend: the user message becomes an inline editor; Send
  // rewinds to before it (the rewind preview is shown when files changed
  // since) and sends the edited text, with the message's attachments, as a
  // new message.
  async function editMessage(div, m) {
    if (div.querySelector('.editor')) { div.querySelector('.editor textarea').focus(); return; }
    const sid = state.session;
    let text = m.text || '';
    if (m.textBytes > utf8Len(text)) text = await wholeText(sid, m.seq, m.textBytes);
    const box = div.querySelector('.text');
    const ed = el('div', 'editor');
    ed.innerHTML = '<textarea aria-label="Edit message" rows="3"></textarea><div class="buttons"><button type="button" class="resend">Send</button> <button type="button" class="cancel">Cancel</button></div>' +
      '<p class="help">Send rewinds the conversation to before this message and sends the edited text instead.</p>';
    const ta = ed.querySelector('textarea'); ta.value = text;
    ta.rows = Math.min(12, Math.max(3, text.split('\n').length + 1));
    box.hidden = true; div.classList.add('editing'); box.after(ed);
    const close = () => { ed.remove(); box.hidden = false; div.classList.remove('editing'); };
    const go = async () => {
      if (!ta.value.trim() && !(m.attachments || []).length) { ta.focus(); return; }
      ed.querySelectorAll('button, textarea').forEach((x) => { x.disabled = true; });
      try {
        if (await rewind(m.seq, { text: ta.value })) return;
      } catch (e) { showError(e); }
      ed.querySelectorAll('button, textarea').forEach((x) => { x.disabled = false; });
    };
    ed.querySelector('.resend').onclick = go;
    ed.querySelector('.cancel').onclick = () => { close(); div.querySelector('button.edit').focus(); };
    ta.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); go(); }
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(); div.querySelector('button.edit').focus(); }
    });
    ta.focus(); ta.setSelectionRange(ta.value.length, ta.value.length);
  }

  // ---- rewind: preview (files that will be restored or not), confirm, input
  // back in the box; with resend ({text}), the edited text is sent instead
  // and the preview is asked only when files changed. Returns whether it rewound.
  async function rewind(seq, resend) {
    const sid = state.session;
    const d = await gql('mutation($s: ID!, $q: Int!) { previewRewind(sessionId: $s, messageSeq: $q) { headSeq fileStateToken text files { path action restorable reason } } }', { s: sid, q: seq });
    const p = d.previewRewind;
    const files = $('rewindfiles');
    files.innerHTML = p.files.length
      ? '<p>Files changed since then:</p><ul>' + p.files.map((f) => '<li><code>' + esc(f.path) + '</code>: ' +
        esc(f.action === 'restore' ? 'put back' : f.action === 'delete' ? 'deleted (created since)' : 'already as it was') +
        (f.restorable ? '' : ' <strong class="warn">not restorable' + (f.reason ? ': ' + esc(f.reason) : '') + '</strong>') + '</li>').join('') + '</ul>'
      : '<p>No files were changed since then.</p>';
    const dlg = $('rewinddlg');
    $('rewindtitle').textContent = resend ? 'Edit and resend: rewind to before this message?' : 'Rewind to before this message?';
    $('rewindok').textContent = resend ? 'Rewind and send' : 'Rewind';
    const answer = resend && !p.files.length ? 'rewind' : await new Promise((resolve) => {
      dlg.returnValue = '';
      dlg.onclose = () => resolve(dlg.returnValue);
      dlg.showModal();
      $('rewindcancel').focus();
    });
    if (answer !== 'rewind' || state.session !== sid) return false;
    const r = await gql('mutation($s: ID!, $q: Int!, $h: Int!, $t: String!) { confirmRewind(sessionId: $s, messageSeq: $q, headSeq: $h, fileStateToken: $t) { text attachments { ' + ATT_FIELDS + ' } files { path restored } } }',
      { s: sid, q: seq, h: p.headSeq, t: p.fileStateToken });
    const restored = r.confirmRewind.files.filter((f) => f.restored).length;
    const note = 'Rewound' + (restored ? '; ' + restored + ' file(s) put back' : '');
    if (resend) {
      try {
        await gql('mutation($s: ID!, $t: String, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: $t, attachmentIds: $a}) { turnStarted } }',
          { s: sid, t: resend.text, a: r.confirmRewind.attachments.map((a) => a.id) });
      } catch (e) {
        // Rewound but not sent: the edited text waits in the message box.
        $('input').value = resend.text; state.attachments = r.confirmRewind.attachments.slice(); renderAttachments();
        throw e;
      }
      $('status').textContent = note + ', and sent the edited message.';
      return true;
    }
    $('input').value = r.confirmRewind.text;
    state.attachments = r.confirmRewind.attachments.slice();
    renderAttachments();
    $('status').textContent = note + '.';
    $('input').focus();
    return true;
  }

  // ---- questions from the model's question tool
  // fallbackNotice shows, in the transcript, that a model call went to a
  // fallback model (a route_fallback event): which model failed, why, and
  // which model answers instead (docs/fallback.md).
  function fallbackNotice(p) {
    if (!p || !p.to) return;
    const n = el('div', 'msg system fallback');
    n.textContent = 'Model ' + ((p.from && p.from.model) || '?') + ' failed (' + String(p.reason || '').replace(/_/g, ' ') + '); answering with fallback ' + p.to.model + '.';
    $('log').appendChild(n); scroll();
  }

  function questionCard(q) {
    if (!q || !q.requestId || document.querySelector('.question[data-request="' + q.requestId + '"]')) return;
    if (q.elicitation) { elicitationCard(q); return; }
    const card = el('div', 'approval question');
    card.dataset.request = q.requestId;
    card.setAttribute('role', 'group');
    card.setAttribute('aria-label', 'Question');
    card.innerHTML = '<div><strong>Question</strong>' + (q.childSessionId ? ' <small>(from a sub-agent)</small>' : '') + '</div><div class="text">' + markdown(q.question) +
      '</div><div class="buttons"><textarea rows="2" aria-label="Answer"></textarea><button type="button">Answer</button></div>';
    const sid = state.session;
    const ta = card.querySelector('textarea'); const b = card.querySelector('button');
    const answer = async () => {
      if (!ta.value.trim()) { ta.focus(); return; }
      b.disabled = ta.disabled = true;
      try { await gql('mutation($s: ID!, $r: ID!, $a: String!) { answerQuestion(sessionId: $s, requestId: $r, answer: $a) }', { s: sid, r: q.requestId, a: ta.value }); }
      catch (e) { showError(e); b.disabled = ta.disabled = false; }
    };
    b.onclick = answer;
    ta.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); answer(); } });
    $('log').appendChild(card);
    ta.focus({ preventScroll: true });
    scroll();
  }
  // elicitationCard is a question an MCP server asked during a tool call
  // (elicitation/create): a form of its fields, or a link to open (URL
  // mode), with Submit, Decline and Cancel; the kernel checks the fields
  // and the server receives the action.
  function elicitationCard(q) {
    const el0 = q.elicitation;
    const card = el('div', 'approval question elicitation');
    card.dataset.request = q.requestId;
    card.setAttribute('role', 'group');
    card.setAttribute('aria-label', 'Question from MCP server ' + el0.server);
    const head = el('div'); const strong = el('strong'); strong.textContent = 'MCP server ' + el0.server + ' asks'; head.append(strong);
    const text = el('div', 'text', markdown(el0.message || q.question || ''));
    const form = el('form', 'fields');
    const inputs = [];
    if (el0.mode === 'url' && el0.url) {
      const a = el('a'); a.href = el0.url; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.textContent = 'Open ' + el0.url;
      form.append(a);
    }
    for (const f of el0.fields || []) {
      const lab = el('label'); lab.append((f.title || f.name) + (f.required ? ' *' : '') + ' ');
      let inp;
      if (f.type === 'boolean') { inp = el('input'); inp.type = 'checkbox'; inp.checked = f.default === true; }
      else if (f.type === 'array') {
        inp = el('select'); inp.multiple = true;
        for (const o of f.options || []) { const op = el('option'); op.value = o.value; op.textContent = o.title || o.value; op.selected = Array.isArray(f.default) && f.default.includes(o.value); inp.append(op); }
      } else if (f.options && f.options.length) {
        inp = el('select');
        if (!f.required) { const none = el('option'); none.value = ''; none.textContent = '—'; inp.append(none); }
        for (const o of f.options) { const op = el('option'); op.value = o.value; op.textContent = o.title || o.value; inp.append(op); }
        if (f.default != null) inp.value = String(f.default);
      } else {
        inp = el('input');
        inp.type = f.type === 'number' || f.type === 'integer' ? 'number' : ({ email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[f.format] || 'text');
        if (f.type === 'integer') inp.step = '1';
        if (f.minimum != null) inp.min = String(f.minimum);
        if (f.maximum != null) inp.max = String(f.maximum);
        if (f.default != null) inp.value = String(f.default);
      }
      inp.name = f.name; inp.required = !!f.required && f.type !== 'boolean';
      lab.append(inp);
      if (f.description) { const d = el('small'); d.textContent = ' ' + f.description; lab.append(d); }
      form.append(lab); inputs.push([f, inp]);
    }
    const value = (f, inp) => {
      if (f.type === 'boolean') return inp.checked;
      if (f.type === 'array') return [...inp.selectedOptions].map((o) => o.value);
      if (inp.value === '') return undefined;
      return f.type === 'number' || f.type === 'integer' ? Number(inp.value) : inp.value;
    };
    const buttons = el('div', 'buttons');
    const mk = (label, action) => { const b = el('button'); b.type = 'button'; b.textContent = label; b.dataset.action = action; buttons.append(b); return b; };
    const submit = mk(el0.mode === 'url' ? 'Done' : 'Submit', 'ACCEPT'); mk('Decline', 'DECLINE'); mk('Cancel', 'CANCEL');
    const sid = state.session;
    const send = async (action) => {
      if (action === 'ACCEPT' && !form.reportValidity()) return;
      const content = {};
      for (const [f, inp] of inputs) { const v = value(f, inp); if (v !== undefined) content[f.name] = v; }
      const all = card.querySelectorAll('button, input, select'); all.forEach((x) => { x.disabled = true; });
      try { await gql('mutation($s: ID!, $r: ID!, $a: String!, $x: QuestionAction) { answerQuestion(sessionId: $s, requestId: $r, answer: $a, action: $x) }', { s: sid, r: q.requestId, a: action === 'ACCEPT' ? JSON.stringify(content) : '', x: action }); }
      catch (e) { showError(e); all.forEach((x) => { x.disabled = false; }); }
    };
    buttons.querySelectorAll('button').forEach((b) => { b.onclick = () => send(b.dataset.action); });
    form.addEventListener('submit', (e) => { e.preventDefault(); send('ACCEPT'); });
    card.append(head, text, form, buttons);
    $('log').appendChild(card);
    (inputs.length ? inputs[0][1] : submit).focus({ preventScroll: true });
    scroll();
  }

  function questionAnswered(q) {
    const c = q && document.querySelector('.question[data-request="' + q.requestId + '"]');
    if (!c) return;
    c.querySelector('.buttons').innerHTML = q.cancelled ? '<em>Not answered (the turn stopped)</em>' : 'Answer: ' + esc(q.answer);
    c.classList.add('resolved');
  }

  // ---- context and token usage
  let usageTimer = null;
  function refreshUsage() {
    clearTimeout(usageTimer);
    usageTimer = setTimeout(async () => {
      const id = state.session; if (!id) return;
      try {
        const d = await gql('query($id: ID!) { session(id: $id) { usage { inputTokens outputTokens totalTokens cachedTokens estimated cost unpricedTokens } contextUsage { tokens limit estimated } } }', { id });
        if (state.session === id && d.session) renderUsage(d.session);
      } catch (e) { /* offline: the next event retries */ }
    }, 150);
  }
  function renderUsage(s) {
    const c = s.contextUsage, u = s.usage;
    $('usage').hidden = false;
    $('ctx').max = Math.max(1, c.limit); $('ctx').value = Math.min(c.tokens, c.limit);
    const pct = Math.round(100 * c.tokens / Math.max(1, c.limit));
    $('ctxtext').textContent = (c.estimated ? '~' : '') + fmtTokens(c.tokens) + ' / ' + fmtTokens(c.limit) + ' (' + pct + '%)';
    $('ctx').setAttribute('aria-valuetext', $('ctxtext').textContent);
    $('tokens').textContent = 'Spent: ' + (u.estimated ? '~' : '') + fmtTokens(u.totalTokens) + ' tokens (in ' + fmtTokens(u.inputTokens) +
      (u.cachedTokens ? ', ' + fmtTokens(u.cachedTokens) + ' cached' : '') + ', out ' + fmtTokens(u.outputTokens) + ')';
    $('cost').textContent = 'Cost: ' + fmtCost(u.cost) + (u.cost == null ? (u.totalTokens ? ' (unpriced: set prices on the model)' : '') :
      u.unpricedTokens ? ' + ' + fmtTokens(u.unpricedTokens) + ' tokens unpriced' : '');
  }
  // fmtCost: null (no price known) is "—", never $0.
  function fmtCost(c) { return c == null ? '—' : '$' + (c >= 1 ? c.toFixed(2) : c >= 0.01 ? c.toFixed(3) : c === 0 ? '0' : c.toPrecision(2)); }

  // afterPaint runs fn once the frame being prepared has been painted.
  function afterPaint(fn) { requestAnimationFrame(() => setTimeout(fn, 0)); }
  const FIRST_SHOWN = 12;
  function scroll() { const log = $('log'); log.scrollTop = log.scrollHeight; }
  // A log read at its end stays at its end when its box changes size (the
  // composer or the usage bar growing, a narrower window).
  let atEnd = true;
  $('log').addEventListener('scroll', () => { const l = $('log'); atEnd = l.scrollHeight - l.scrollTop - l.clientHeight < 40; }, { passive: true });
  if ('ResizeObserver' in window) new ResizeObserver(() => { if (atEnd) scroll(); }).observe($('log'));
  function appendMessage(m) {
    const log = $('log');
    if (log.querySelector('.msg[data-seq="' + m.seq + '"]')) return;
    if (state.live) { state.live.remove(); state.live = null; }
    log.appendChild(renderMessage(m));
    linkTools();
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
    if (state.phase === 'IDLE') linkTools();
  }
  function renderQueue(q) {
    state.queue = q || [];
    const log = $('log');
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    const list = $('queuelist'); list.innerHTML = '';
    const sid = state.session;
    const mut = (query, vars) => gql(query, Object.assign({ s: sid }, vars)).catch(showError);
    const btn = (label, aria, fn) => { const b = el('button'); b.type = 'button'; b.textContent = label; b.setAttribute('aria-label', aria); b.onclick = fn; return b; };
    state.queue.forEach((it, i) => {
      const li = el('li'); li.dataset.id = it.id;
      if (state.editing && state.editing.id === it.id) {
        const ta = el('textarea'); ta.rows = 2; ta.value = state.editing.text; ta.setAttribute('aria-label', 'Edit queued message');
        ta.oninput = () => { state.editing.text = ta.value; };
        const save = async () => {
          const text = ta.value; state.editing = null;
          await mut('mutation($s: ID!, $i: ID!, $t: String) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: $t}) { id } }', { i: it.id, t: text });
        };
        ta.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); save(); }
          if (e.key === 'Escape') { state.editing = null; renderQueue(state.queue); }
        });
        li.append(ta, btn('Save', 'Save queued message', save), btn('Cancel', 'Cancel editing', () => { state.editing = null; renderQueue(state.queue); }));
        list.appendChild(li);
        setTimeout(() => ta.focus(), 0);
        return;
      }
      const span = el('span', 'qtext'); span.textContent = it.text + (it.truncated ? '…' : '');
      li.append(span, ' ');
      if ((it.attachments || []).length) li.append(el('small', null, esc(' +' + it.attachments.length + ' attachment(s) ')));
      li.append(btn('Edit', 'Edit queued message', async () => {
        let text = it.text;
        if (it.truncated) {
          const d = await gql('query($id: ID!) { session(id: $id) { queue { id text } } }', { id: sid });
          const full = d.session.queue.find((x) => x.id === it.id); if (full) text = full.text;
        }
        state.editing = { id: it.id, text }; renderQueue(state.queue);
      }));
      const up = btn('↑', 'Move queued message up', () => mut('mutation($s: ID!, $i: ID!, $x: Int!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: $x) { id } }', { i: it.id, x: i - 1 }));
      const down = btn('↓', 'Move queued message down', () => mut('mutation($s: ID!, $i: ID!, $x: Int!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: $x) { id } }', { i: it.id, x: i + 1 }));
      up.disabled = i === 0; down.disabled = i === state.queue.length - 1;
      li.append(up, down, btn('Remove', 'Remove queued message', () => mut('mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }', { i: it.id })));
      list.appendChild(li);
    });
    if (state.editing && !state.queue.some((it) => it.id === state.editing.id)) state.editing = null; // it started or was removed
    $('queue').hidden = !state.queue.length;
    if (atBottom) scroll(); // the queue takes room from the log: keep the newest text in view
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
        if (ev.message && ev.message.toolCallId && ev.at) {
          const t = toolTimes.get(ev.message.toolCallId) || {}; t.end = Date.parse(ev.at); toolTimes.set(ev.message.toolCallId, t);
        }
        if (ev.message) appendMessage(ev.message); break;
      case 'tool_started': {
        const id = ev.payload && ev.payload.toolCallId;
        if (id && ev.at) toolTimes.set(id, { start: Date.parse(ev.at) });
        break;
      }
      case 'approval_requested':
        if (ev.approval) approvalCard(ev.approval); break;
      case 'guardian_verdict': guardianLine(ev.guardianVerdict); break;
      case 'question_requested': questionCard(ev.payload); break;
      case 'route_fallback': fallbackNotice(ev.payload); break;
      case 'question_answered': questionAnswered(ev.payload); break;
      case 'usage': refreshUsage(); break;
      case 'approval_resolved': {
        const c = ev.approval && document.querySelector('.approval[data-request="' + ev.approval.requestId + '"]');
        if (c) { c.querySelector('.buttons').textContent = 'Decision: ' + String(ev.approval.decision || '').toLowerCase().replace(/_/g, ' '); c.classList.add('resolved'); }
        break;
      }
      case 'phase_changed': setPhase(ev.phase); break;
      case 'queue_snapshot': renderQueue(ev.queue); break;
      case 'turn_finished': if (state.live) { state.live.classList.remove('streaming'); } refreshUsage(); break;
      case 'session_deleted': openSession(null); break;
      case 'history_rewound': case 'compaction_checkpoint': case 'resync_required': openSession(state.session, true); break;
    }
  }

  // guardianLine puts the guardian's verdict (GUARDED) on its tool card.
  function guardianLine(g) {
    const card = g && $('log').querySelector('details.toolcall[data-call="' + CSS.escape(g.toolCallId) + '"]');
    if (!card) return;
    const p = el('p', 'guardian verdict-' + g.verdict);
    p.textContent = 'Guardian ' + g.verdict + (g.cause && g.cause !== 'verdict' ? ' (' + g.cause + ')' : '') + (g.model ? ' by ' + g.model : '') + (g.reason ? ': ' + g.reason : '');
    card.appendChild(p);
  }

  async function openSession(id, keepInput) {
    if (state.sub) { state.sub(); state.sub = null; }
    if (!keepInput && id !== state.session) { state.attachments = []; renderAttachments(); }
    state.editing = null;
    state.session = id; state.lastSeq = 0; state.live = null;
    $('log').innerHTML = '';
    for (const b of document.querySelectorAll('#sessions button.s')) b.setAttribute('aria-current', String(b.dataset.id === id));
    const on = !!id;
    for (const x of ['input', 'send', 'pin', 'rename', 'delete', 'compact', 'export', 'file']) $(x).disabled = !on;
    $('usage').hidden = true;
    $('pin').setAttribute('aria-pressed', String(!!(on && state.sessions.get(id) && state.sessions.get(id).pinned)));
    if (!id) { $('title').textContent = 'No session'; renderModelPicker(); setPhase('IDLE'); renderQueue([]); history.replaceState(null, '', '/'); return; }
    history.replaceState(null, '', '#' + id);
    const gen = ++state.gen;
    let d;
    if (prefetched && prefetched.id === id) {
      const p = prefetched.data; prefetched = null;
      d = await p.catch(() => gql(SESSION_Q, { id }));
    } else {
      prefetched = null;
      d = await gql(SESSION_Q, { id });
    }
    if (state.session !== id || state.gen !== gen) return;
    performance.mark('foya:session-data');
    toolTimes.clear();
    const s = d.session;
    if (!s) { openSession(null); return; }
    $('title').textContent = titleOf(s);
    state.sessions.set(id, Object.assign({}, state.sessions.get(id), { title: s.title, connectionId: s.connectionId, model: s.model, approvalMode: s.approvalMode, phase: s.phase })); renderModelPicker();
    // The last FIRST_SHOWN messages (a screenful and more) are rendered at
    // once; the rest of the page goes in above them after that first paint.
    const msgs = s.messages, cut = Math.max(0, msgs.length - FIRST_SHOWN);
    const frag = document.createDocumentFragment();
    for (const m of msgs.slice(cut)) frag.appendChild(renderMessage(m));
    $('log').appendChild(frag);
    state.lastSeq = s.headSeq;
    setPhase(s.phase); linkTools(); renderQueue(s.queue);
    scroll();
    performance.mark('foya:session-rendered');
    afterPaint(() => {
      if (state.session !== id || state.gen !== gen) return;
      const log = $('log');
      if (cut) {
        const fromBottom = log.scrollHeight - log.scrollTop;
        const rest = document.createDocumentFragment();
        for (const m of msgs.slice(0, cut)) rest.appendChild(renderMessage(m));
        log.insertBefore(rest, log.querySelector('.msg'));
        linkTools();
        log.scrollTop = log.scrollHeight - fromBottom;
      }
      // The button goes in once the log is at its end, so it is not in view at once.
      if (msgs.length === HISTORY_PAGE) log.insertBefore(earlierButton(id, msgs[0].seq), log.firstChild);
      refreshUsage();
      toolDurations(id, msgs).catch(() => { /* durations are optional */ });
    });
    if (s.phase !== 'IDLE') await showPending(id, s.headSeq);
    const EV = 'subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, afterSeq: $a) { seq type at delta phase payload messageTruncated message { ' + MSG_FIELDS + ' } approval { requestId tool action summary decision } guardianVerdict { toolCallId verdict reason cause model } queue { id text truncated attachments { id } } } }';
    // variables are recomputed on every (re)subscribe: a reconnect resumes after the last seq shown.
    state.sub = ws.subscribe(EV, () => ({ s: id, a: state.lastSeq }), (data) => onSessionEvent(data.sessionEvents));
    $('input').focus();
  }

  // showPending puts back the approval and question cards still open in a
  // running turn (their requests are in the log before headSeq).
  async function showPending(id, head) {
    const d = await gql('query($s: ID!, $a: Int) { events(sessionId: $s, afterSeq: $a, limit: 500) { type payload approval { requestId tool action summary decision } } }', { s: id, a: Math.max(0, head - 500) });
    if (state.session !== id) return;
    const open = new Map();
    for (const e of d.events) {
      const r = e.approval ? e.approval.requestId : e.payload && e.payload.requestId;
      if (e.type === 'approval_requested' || e.type === 'question_requested') open.set(r, e);
      else if (e.type === 'approval_resolved' || e.type === 'question_answered') open.delete(r);
    }
    for (const e of open.values()) if (e.type === 'approval_requested') approvalCard(e.approval); else questionCard(e.payload);
  }

  // ---- attachments: uploaded with the GraphQL multipart request spec, sent with the next message.
  function renderAttachments() {
    const ul = $('attachments'); ul.innerHTML = '';
    for (const a of state.attachments) {
      const li = el('li'); li.textContent = a.name + ' (' + fmtBytes(a.size) + ') ';
      const b = el('button'); b.type = 'button'; b.textContent = '×'; b.setAttribute('aria-label', 'Remove attachment ' + a.name);
      b.onclick = () => { state.attachments = state.attachments.filter((x) => x !== a); renderAttachments(); $('input').focus(); };
      li.appendChild(b); ul.appendChild(li);
    }
  }
  // multipart: one file as variables.f (the GraphQL multipart request spec).
  async function multipart(query, variables, file) {
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
  async function upload(file) {
    return (await multipart('mutation($f: Upload!) { uploadAttachment(file: $f) { ' + ATT_FIELDS + ' } }', {}, file)).uploadAttachment;
  }
  $('file').addEventListener('change', async (e) => {
    const files = [...e.target.files]; e.target.value = '';
    for (const f of files) {
      $('status').textContent = 'Uploading ' + f.name + '…';
      try { state.attachments.push(await upload(f)); renderAttachments(); $('status').textContent = ''; }
      catch (err) { showError(err); }
    }
  });

  // ---- sidebar
  // Sessions grouped by project (one collapsible <details> per project, "No
  // project" last); what is collapsed survives re-renders and reloads of this tab.
  const collapsed = new Set(JSON.parse(sessionStorage.getItem('foya-collapsed') || '[]'));
  function renderSessions() {
    const root = $('sessions'); root.innerHTML = '';
    const list = [...state.sessions.values()].filter((s) => !s.parentId)
      .sort((a, b) => (b.pinned - a.pinned) || String(b.updatedAt).localeCompare(String(a.updatedAt)));
    const groups = new Map();
    for (const s of list) {
      const k = s.project ? s.project.id : '';
      if (!groups.has(k)) groups.set(k, { name: s.project ? (s.project.name || s.project.path) : 'No project', items: [] });
      groups.get(k).items.push(s);
    }
    const keys = [...groups.keys()].sort((a, b) => (a === '') - (b === '') || groups.get(a).name.localeCompare(groups.get(b).name));
    for (const k of keys) {
      const g = groups.get(k);
      const det = el('details', 'group'); det.open = !collapsed.has(k); det.dataset.project = k;
      const sum = el('summary'); sum.textContent = g.name + ' (' + g.items.length + ')'; det.appendChild(sum);
      det.addEventListener('toggle', () => {
        if (det.open) collapsed.delete(k); else collapsed.add(k);
        sessionStorage.setItem('foya-collapsed', JSON.stringify([...collapsed]));
      });
      const ul = el('ul');
      for (const s of g.items) {
        const li = el('li'); const b = el('button', 's'); b.type = 'button'; b.dataset.id = s.id;
        b.setAttribute('aria-current', String(s.id === state.session));
        b.innerHTML = '<span>' + esc(titleOf(s)) + '</span><span class="ph">' + esc(String(s.phase).toLowerCase()) + '</span>';
        b.onclick = () => openSession(s.id).catch(showError);
        li.appendChild(b); ul.appendChild(li);
      }
      det.appendChild(ul); root.appendChild(det);
    }
  }
  // ---- titles, models and approval modes
  // A session without a title is "New session" until the kernel names it
  // (after its first turn): never its raw id.
  function titleOf(s) { return (s && s.title) || 'New session'; }
  // The approval modes are exactly the schema's ApprovalMode enum.
  const MODES = {
    EXPLORE: ['Explore', 'Read-only tools run; writes and commands are denied without asking.'],
    ASK: ['Ask', 'Read-only tools run; writes and commands wait for your approval.'],
    BYPASS: ['Bypass', 'Every tool runs without asking.'],
    GUARDED: ['Guarded', 'A guardian model reviews each write and command first; only what it escalates waits for your approval.'],
  };
  for (const o of $('mode').options) o.title = MODES[o.value][1];
  const modeHelp = () => { $('modehelp').textContent = MODES[$('mode').value][1]; };
  // The Approval mode select, like Model, belongs to the open session
  // (changed with updateSession) or, with none open, to the next new one.
  state.newMode = 'ASK';
  $('mode').addEventListener('change', async () => {
    modeHelp();
    const v = $('mode').value;
    if (!state.session) { state.newMode = v; return; }
    try {
      const d = await gql('mutation($s: ID!, $m: ApprovalMode) { updateSession(id: $s, input: {approvalMode: $m}) { ' + S_FIELDS + ' } }', { s: state.session, m: v });
      state.sessions.set(d.updateSession.id, d.updateSession);
      $('status').textContent = 'Approval mode: ' + MODES[v][0] + '.';
    } catch (err) { showError(err); renderModelPicker(); }
  });
  modeHelp();
  // languageModels: every model of the language connections, in order.
  function languageModels() {
    const out = [];
    for (const c of state.connections || []) {
      if ((c.type || 'LANGUAGE') !== 'LANGUAGE') continue;
      for (const m of c.models) out.push({ value: c.id + '|' + m.id, label: c.name + '/' + m.id, conn: c, model: m.id });
    }
    return out;
  }
  // effectiveDefault: what a session created without a model binds (the
  // LANGUAGE default, else the first language connection's first model).
  function effectiveDefault() {
    const ms = languageModels();
    const d = state.defaults && state.defaults.language;
    if (d) { const hit = ms.find((m) => m.value === d.connectionId + '|' + d.model); if (hit) return hit; }
    return ms[0] || null;
  }
  // renderModelPicker fills the composer's Model select: with a session open
  // it shows (and changes, with updateSession) that session's model; with none
  // it is the model of the next new session ("" = the default, named).
  function renderModelPicker() {
    const ms = $('model'); ms.length = 0;
    const models = languageModels(); const def = effectiveDefault();
    const s = state.session ? state.sessions.get(state.session) : null;
    const add = (value, label) => { const o = el('option'); o.value = value; o.textContent = label; ms.appendChild(o); };
    if (s) {
      const cur = s.connectionId && s.model ? s.connectionId + '|' + s.model : '';
      if (!cur) add('', '(no model: choose one)');
      else if (!models.some((m) => m.value === cur)) add(cur, s.model);
      for (const m of models) add(m.value, m.label);
      ms.value = cur;
      $('modelhelp').textContent = cur ? '' : 'This session has no model: choose one to send.';
      if (s.approvalMode && MODES[s.approvalMode]) $('mode').value = s.approvalMode;
    } else {
      add('', def ? 'Default (' + def.label + ')' : '(no model yet)');
      for (const m of models) add(m.value, m.label);
      if (state.newModel && !models.some((m) => m.value === state.newModel)) state.newModel = '';
      ms.value = state.newModel || '';
      $('modelhelp').textContent = '';
      $('mode').value = state.newMode;
    }
    ms.disabled = !models.length;
    modeHelp();
    const usable = models.length > 0;
    // New session stays clickable: without a model it shows the setup panel
    // (and says why) instead of creating a session that cannot answer.
    $('new').dataset.usable = String(usable);
    $('newhelp').textContent = usable ? '' : 'Connect a model first: a session needs one.';
    showSetup(!usable && state.connections !== undefined);
  }
  $('model').addEventListener('change', async (e) => {
    const v = e.target.value;
    if (!state.session) { state.newModel = v; return; }
    if (!v) return;
    const [c, m] = v.split('|');
    try {
      const d = await gql('mutation($s: ID!, $c: ID, $m: String) { updateSession(id: $s, input: {connectionId: $c, model: $m}) { ' + S_FIELDS + ' } }', { s: state.session, c, m });
      state.sessions.set(d.updateSession.id, d.updateSession); renderModelPicker();
      $('status').textContent = 'Model: ' + m + '.';
    } catch (err) { showError(err); renderModelPicker(); }
  });

  const CAPS = 'contextWindow maxInputTokens maxOutputTokens imageInput toolCalling reasoningEfforts webSearch generation { image video audio } ' +
    'prices { inputPerMillion cachedInputPerMillion cacheWritePerMillion outputPerMillion }';
  const DEFAULTS = [['deflang', 'LANGUAGE', 'language'], ['deffast', 'FAST', 'fast'], ['defimage', 'IMAGE', 'image'], ['defvideo', 'VIDEO', 'video']];
  async function loadSidebar() {
    const d = await gql('{ sessions { ' + S_FIELDS + ' } projects { id name path } connections { id name baseUrl type apiKeyConfigured models { id capabilities { ' + CAPS + ' } } } ' +
      'defaultModels { language { connectionId model } fast { connectionId model } image { connectionId model } video { connectionId model } } }');
    state.sessions = new Map(d.sessions.map((s) => [s.id, s]));
    renderSessions();
    const ps = $('project'); const keepP = ps.value; ps.length = 1;
    for (const p of d.projects) { const o = el('option'); o.value = p.id; o.textContent = p.name || p.path; ps.appendChild(o); }
    ps.value = keepP;
    state.connections = d.connections; state.defaults = d.defaultModels;
    renderModelPicker();
    const cl = $('connlist'); cl.innerHTML = '';
    for (const c of d.connections) {
      const li = el('li'); li.dataset.id = c.id;
      li.append(c.name + (c.type && c.type !== 'LANGUAGE' ? ' [' + c.type.toLowerCase() + ']' : '') + ' (' + (c.models.map((m) => m.id).join(', ') || 'no models') + ') ');
      const b = el('button'); b.type = 'button'; b.textContent = 'Refresh models'; b.setAttribute('aria-label', 'Refresh models of ' + c.name);
      b.onclick = async () => {
        b.disabled = true;
        try { await gql('mutation($c: ID!) { refreshModels(connectionId: $c) { id } }', { c: c.id }); await loadSidebar(); $('status').textContent = 'Models of ' + c.name + ' refreshed.'; }
        catch (e) { showError(e); b.disabled = false; }
      };
      const ed = el('button'); ed.type = 'button'; ed.textContent = 'Edit'; ed.setAttribute('aria-label', 'Edit connection ' + c.name);
      ed.onclick = () => editConnection(c);
      const del = el('button'); del.type = 'button'; del.textContent = 'Delete'; del.setAttribute('aria-label', 'Delete connection ' + c.name);
      del.onclick = async () => {
        if (!window.confirm('Delete the connection "' + c.name + '"? Defaults that use it are cleared and its sessions are unbound (their history stays).')) return;
        try { await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: c.id }); await loadSidebar(); $('status').textContent = 'Connection ' + c.name + ' deleted.'; }
        catch (e) { showError(e); }
      };
      li.append(b, ' ', ed, ' ', del); cl.appendChild(li);
    }
    // Default selects: LANGUAGE and FAST take language connections' models, IMAGE and VIDEO their own kind.
    for (const [sel, purpose, key] of DEFAULTS) {
      const want = purpose === 'FAST' ? 'LANGUAGE' : purpose;
      const s = $(sel); s.length = 1;
      for (const c of d.connections) {
        if ((c.type || 'LANGUAGE') !== want) continue;
        for (const m of c.models) { const o = el('option'); o.value = c.id + '|' + m.id; o.textContent = c.name + '/' + m.id; s.appendChild(o); }
      }
      const ref = d.defaultModels[key];
      s.value = ref ? ref.connectionId + '|' + ref.model : '';
    }
  }

  // ---- MCP servers: status, and a sign-in link for one that needs OAuth
  // (NEEDS_AUTH). The link is the server's authUrl, opened in a new tab;
  // the authorization server sends that tab back to the kernel's
  // /mcp/oauth/callback, and the list follows the server's status through
  // kernelEvents (catalog_updated, mcp_needs_auth).
  async function loadMcp() {
    const d = await gql('{ mcpServers { id name status error authUrl } }');
    const ul = $('mcplist'); ul.innerHTML = '';
    $('mcpnone').hidden = d.mcpServers.length > 0;
    for (const m of d.mcpServers) {
      const li = el('li'); li.dataset.id = m.id; li.dataset.status = m.status;
      li.append(m.name + ': ');
      const st = el('span', 'mcpstatus'); st.textContent = m.status === 'NEEDS_AUTH' ? 'needs a sign-in' : m.status.toLowerCase().replace('_', ' ');
      li.append(st);
      if (m.error) { const er = el('div', 'mcperror'); er.textContent = m.error; li.append(er); }
      if (m.status === 'NEEDS_AUTH') {
        if (m.authUrl) {
          const a = el('a', 'signin'); a.href = m.authUrl; a.target = '_blank'; a.rel = 'noopener noreferrer';
          a.textContent = 'Sign in'; a.setAttribute('aria-label', 'Sign in to ' + m.name);
          li.append(' ', a);
        } else {
          const b = el('button'); b.type = 'button'; b.textContent = 'Get a sign-in link'; b.setAttribute('aria-label', 'Get a sign-in link for ' + m.name);
          b.onclick = async () => { b.disabled = true; try { await gql('mutation($id: ID!) { loginMcpServer(id: $id) }', { id: m.id }); await loadMcp(); } catch (e) { showError(e); b.disabled = false; } };
          li.append(' ', b);
        }
      }
      if (m.status === 'FAILED' || m.status === 'READY') {
        const b = el('button'); b.type = 'button'; b.textContent = 'Restart'; b.setAttribute('aria-label', 'Restart MCP server ' + m.name);
        b.onclick = async () => { b.disabled = true; try { await gql('mutation($id: ID!) { restartMcpServer(id: $id) { id } }', { id: m.id }); await loadMcp(); } catch (e) { showError(e); b.disabled = false; } };
        li.append(' ', b);
      }
      ul.appendChild(li);
    }
  }

  // ---- connection editor: name, base URL, the key (write-only: replaced or
  // removed, never read) and per-model prices. Capabilities are replaced
  // whole by the API, so the other declared capabilities are sent back as read.
  function priceInput(label, v) {
    const i = el('input'); i.type = 'number'; i.min = '0'; i.step = 'any'; i.setAttribute('aria-label', label);
    if (v != null) i.value = String(v);
    return i;
  }
  function editConnection(c) {
    const dlg = $('conndlg'); const f = $('connedit');
    f.reset();
    f.elements.name.value = c.name; f.elements.baseUrl.value = c.baseUrl;
    f.elements.apiKey.placeholder = c.apiKeyConfigured ? '(a key is stored; leave empty to keep it)' : '(no key stored)';
    $('conntitle').textContent = 'Edit connection ' + c.name;
    const tb = $('connprices').tBodies[0]; tb.innerHTML = '';
    for (const m of c.models) {
      const p = m.capabilities.prices || {};
      const tr = el('tr'); tr.dataset.model = m.id;
      const name = el('td'); name.textContent = m.id; tr.appendChild(name);
      for (const [k, label] of [['inputPerMillion', 'Input price of '], ['cachedInputPerMillion', 'Cached input price of '], ['outputPerMillion', 'Output price of ']]) {
        const td = el('td'); const i = priceInput(label + m.id, p[k]); i.name = k; td.appendChild(i); tr.appendChild(td);
      }
      tb.appendChild(tr);
    }
    dlg.returnValue = '';
    dlg.onclose = async () => {
      if (dlg.returnValue !== 'save') return;
      const input = { name: f.elements.name.value.trim(), baseUrl: f.elements.baseUrl.value.trim() };
      if (f.elements.clearKey.checked) input.apiKey = ''; else if (f.elements.apiKey.value) input.apiKey = f.elements.apiKey.value;
      f.elements.apiKey.value = '';
      try {
        input.models = c.models.map((m) => {
          const caps = Object.assign({}, m.capabilities); delete caps.prices;
          const row = tb.querySelector('tr[data-model="' + CSS.escape(m.id) + '"]');
          const num = (k) => { const v = row.querySelector('input[name=' + k + ']').value; return v === '' ? null : Number(v); };
          const inp = num('inputPerMillion'), cached = num('cachedInputPerMillion'), out = num('outputPerMillion');
          if (inp != null || out != null || cached != null) {
            if (inp == null || out == null) throw new Error('Prices of ' + m.id + ': input and output are both needed (or neither).');
            const old = m.capabilities.prices || {};
            caps.prices = { inputPerMillion: inp, outputPerMillion: out, cachedInputPerMillion: cached, cacheWritePerMillion: old.cacheWritePerMillion == null ? null : old.cacheWritePerMillion };
          }
          return { id: m.id, capabilities: caps };
        });
        await gql('mutation($c: ID!, $i: ConnectionInput!) { updateConnection(id: $c, input: $i) { id } }', { c: c.id, i: input });
        await loadSidebar(); $('status').textContent = 'Connection ' + input.name + ' saved.';
      } catch (e) { showError(e); }
    };
    dlg.showModal();
  }
  function watchKernel() {
    ws.subscribe('subscription { kernelEvents { type sessionId session { ' + S_FIELDS + ' } } }', {}, (data) => {
      const e = data.kernelEvents;
      if (e.type === 'session_deleted') { state.sessions.delete(e.sessionId); if (e.sessionId === state.session) openSession(null); }
      else if (e.session) {
        state.sessions.set(e.session.id, e.session);
        if (e.session.id === state.session) {
          $('title').textContent = titleOf(e.session);
          renderModelPicker();
          $('pin').setAttribute('aria-pressed', String(!!e.session.pinned));
        }
      }
      if (e.type === 'catalog_updated') { loadSidebar().catch(showError); loadMcp().catch(showError); }
      else if (e.type === 'mcp_needs_auth') loadMcp().catch(showError);
      else renderSessions();
    });
  }

  for (const [sel, purpose] of DEFAULTS) {
    $(sel).addEventListener('change', async (e) => {
      const [c, m] = e.target.value ? e.target.value.split('|') : [null, null];
      try { await gql('mutation($p: ModelPurpose!, $c: ID, $m: String) { setDefaultModel(purpose: $p, connectionId: $c, model: $m) { language { model } } }', { p: purpose, c, m }); $('status').textContent = 'Default saved.'; }
      catch (err) { showError(err); loadSidebar().catch(showError); }
    });
  }

  // ---- controls
  async function send() {
    const text = $('input').value;
    const atts = state.attachments;
    if (!state.session || (!text.trim() && !atts.length)) return;
    $('input').value = ''; state.attachments = []; renderAttachments();
    try { await gql('mutation($s: ID!, $t: String, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: $t, attachmentIds: $a}) { turnStarted } }', { s: state.session, t: text, a: atts.map((a) => a.id) }); }
    catch (e) { $('input').value = text; state.attachments = atts; renderAttachments(); showError(e); }
  }
  $('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $('stop').onclick = async () => {
    const sid = state.session;
    let keep = true;
    if (state.queue.length) {
      const dlg = $('stopdlg');
      const answer = await new Promise((resolve) => { dlg.returnValue = ''; dlg.onclose = () => resolve(dlg.returnValue); dlg.showModal(); });
      if (answer !== 'keep' && answer !== 'clear') return;
      keep = answer === 'keep';
    }
    gql('mutation($s: ID!, $k: Boolean) { stopTurn(sessionId: $s, keepQueue: $k) { id } }', { s: sid, k: keep }).catch(showError);
  };
  $('new').onclick = async () => {
    if (!languageModels().length) { showSetup(true); setDrawer(false); $('preset').focus(); return; }
    try {
      const input = { approvalMode: state.newMode };
      if ($('newtitle').value.trim()) input.title = $('newtitle').value.trim();
      $('newtitle').value = '';
      if ($('project').value) input.projectId = $('project').value;
      if (state.newModel) { const [c, m] = state.newModel.split('|'); input.connectionId = c; input.model = m; }
      const d = await gql('mutation($i: CreateSessionInput!) { createSession(input: $i) { ' + S_FIELDS + ' } }', { i: input });
      state.sessions.set(d.createSession.id, d.createSession); renderSessions();
      await openSession(d.createSession.id);
    } catch (e) { showError(e); }
  };
  $('pin').onclick = () => gql('mutation($s: ID!, $p: Boolean) { updateSession(id: $s, input: {pinned: $p}) { id } }',
    { s: state.session, p: $('pin').getAttribute('aria-pressed') !== 'true' }).catch(showError);
  $('rename').onclick = async () => {
    const t = window.prompt('New title', (state.sessions.get(state.session) || {}).title || '');
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
    const input = { name: f.get('name'), baseUrl: f.get('baseUrl'), type: f.get('type') || 'LANGUAGE' };
    if (input.type === 'VIDEO') input.videoProtocol = 'openai_video'; // the only video protocol today
    if (f.get('apiKey')) input.apiKey = f.get('apiKey');
    const inP = f.get('inPrice'), outP = f.get('outPrice');
    if ((inP === '') !== (outP === '')) { showError(new Error('Prices: give both input and output (or neither).')); return; }
    if (inP !== '') for (const m of models) m.capabilities = { prices: { inputPerMillion: Number(inP), outputPerMillion: Number(outP) } };
    if (models.length) input.models = models;
    try { await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id } }', { i: input }); e.target.reset(); await loadSidebar(); }
    catch (err) { showError(err); }
  });

  // ---- first-run setup: presets, and a check (the provider lists its
  // models) before the connection is kept. The API has no dry run: the
  // connection is created, refreshModels checks it, and a failed check
  // deletes it again unless the person chooses to save without checking.
  const PRESETS = [
    { id: 'openai', label: 'OpenAI', name: 'openai', baseUrl: 'https://api.openai.com/v1', kind: 'openai', key: 'env:OPENAI_API_KEY', help: 'Chat Completions; a key from platform.openai.com (or env:OPENAI_API_KEY, read by the kernel).' },
    { id: 'anthropic', label: 'Anthropic', name: 'claude', baseUrl: 'https://api.anthropic.com', kind: 'anthropic', key: 'env:ANTHROPIC_API_KEY', help: 'Anthropic Messages; a key from console.anthropic.com (or env:ANTHROPIC_API_KEY).' },
    { id: 'responses', label: 'OpenAI (Responses API)', name: 'openai-responses', baseUrl: 'https://api.openai.com/v1', kind: 'openai-responses', key: 'env:OPENAI_API_KEY', help: 'The OpenAI Responses API (e.g. codex models); the same key as OpenAI.' },
    { id: 'openrouter', label: 'OpenRouter', name: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', kind: 'openai', key: 'env:OPENROUTER_API_KEY', help: 'Many models through one OpenAI-compatible endpoint; a key from openrouter.ai.' },
    { id: 'ollama', label: 'Ollama (this machine)', name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', kind: 'openai', key: '', help: 'A local Ollama server: no key; its pulled models are listed.' },
    { id: 'lmstudio', label: 'LM Studio (this machine)', name: 'lmstudio', baseUrl: 'http://127.0.0.1:1234/v1', kind: 'openai', key: '', help: 'LM Studio\'s local server: no key.' },
    { id: 'vllm', label: 'vLLM (this machine)', name: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', kind: 'openai', key: '', help: 'vLLM\'s OpenAI-compatible server: a key only if it was started with --api-key.' },
    { id: 'custom', label: 'Other OpenAI-compatible', name: 'custom', baseUrl: '', kind: 'openai', key: '', help: 'Any endpoint speaking Chat Completions; its base URL usually ends in /v1.' },
  ];
  for (const p of PRESETS) { const o = el('option'); o.value = p.id; o.textContent = p.label; $('preset').appendChild(o); }
  function applyPreset() {
    const p = PRESETS.find((x) => x.id === $('preset').value) || PRESETS[0];
    const f = $('setupform');
    f.elements.name.value = p.name; f.elements.baseUrl.value = p.baseUrl; f.elements.apiKey.value = '';
    f.elements.apiKey.placeholder = p.key ? 'sk-… or ' + p.key : '(none needed)';
    $('presethelp').textContent = p.help;
    $('setupresult').textContent = ''; $('setupforce').hidden = true;
  }
  $('preset').addEventListener('change', applyPreset); applyPreset();
  function showSetup(on) {
    const was = !$('setup').hidden;
    $('setup').hidden = !on;
    if (on && !was && !state.session) $('preset').focus({ preventScroll: true });
  }
  function setupInput() {
    const f = $('setupform'); const p = PRESETS.find((x) => x.id === $('preset').value) || PRESETS[0];
    const input = { name: f.elements.name.value.trim(), baseUrl: f.elements.baseUrl.value.trim(), providerKind: p.kind, type: 'LANGUAGE' };
    if (f.elements.apiKey.value.trim()) input.apiKey = f.elements.apiKey.value.trim();
    const models = f.elements.models.value.split(',').map((m) => m.trim()).filter(Boolean);
    if (models.length) input.models = models.map((id) => ({ id }));
    return input;
  }
  // afterSetup makes the first language model the default when none is set,
  // so the default shows at once, then reloads the sidebar.
  async function afterSetup(conn, note) {
    const first = conn.models[0];
    if (first && !(state.defaults && state.defaults.language)) {
      await gql('mutation($c: ID, $m: String) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: $m) { language { model } } }', { c: conn.id, m: first.id });
    }
    $('setupform').reset(); applyPreset();
    await loadSidebar();
    $('status').textContent = note;
  }
  $('setupform').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = setupInput(); const res = $('setupresult');
    $('setupsave').disabled = true; $('setupforce').hidden = true;
    res.textContent = 'Checking ' + input.baseUrl + '…';
    let conn = null;
    try {
      conn = (await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id name models { id } } }', { i: input })).createConnection;
      let listed;
      try {
        listed = (await gql('mutation($c: ID!) { refreshModels(connectionId: $c) { id name models { id } } }', { c: conn.id })).refreshModels;
      } catch (err) {
        await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: conn.id }).catch(() => {});
        res.textContent = 'Check failed, nothing saved: ' + err.message;
        $('setupforce').hidden = !input.models; // without listed models there is nothing to use
        return;
      }
      if (!listed.models.length) {
        await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: conn.id }).catch(() => {});
        res.textContent = 'The provider answered but listed no models: name one under Models.';
        return;
      }
      res.textContent = '';
      await afterSetup(listed, 'Connected ' + listed.name + ': ' + listed.models.length + ' model(s).');
    } catch (err) { res.textContent = err.message; }
    finally { $('setupsave').disabled = false; }
  });
  $('setupforce').onclick = async () => {
    try {
      const conn = (await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id name models { id } } }', { i: setupInput() })).createConnection;
      $('setupresult').textContent = '';
      await afterSetup(conn, 'Saved ' + conn.name + ' without checking it.');
    } catch (err) { $('setupresult').textContent = err.message; }
  };

  // ---- export and import (foya.session JSON Lines, docs/export.md)
  $('export').onclick = async () => {
    const id = state.session; if (!id) return;
    try {
      // The export route streams the document, with no size bound.
      const headers = {}; if (token()) headers.Authorization = 'Bearer ' + token();
      const resp = await fetch('/sessions/' + encodeURIComponent(id) + '/export', { headers });
      if (!resp.ok) {
        let body = null; try { body = await resp.json(); } catch (e) { /* not JSON */ }
        throw body && body.errors ? new GraphQLError(body.errors) : new Error('kernel answered HTTP ' + resp.status);
      }
      const doc = await resp.blob();
      const title = titleOf(state.sessions.get(id));
      const a = el('a'); a.href = URL.createObjectURL(new Blob([doc], { type: 'application/jsonl' }));
      a.download = (title.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'session') + '.foya.jsonl';
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      $('status').textContent = 'Exported.';
    } catch (e) { showError(e); }
  };
  // Import binds the new session to the project chosen in the New session
  // form (none by default); the file goes up as a multipart request.
  $('importfile').addEventListener('change', async (e) => {
    const f = e.target.files[0]; e.target.value = '';
    if (!f) return;
    $('status').textContent = 'Importing ' + f.name + '…';
    try {
      const d = await multipart('mutation($f: Upload!, $p: ID) { importSessionFile(file: $f, projectId: $p) { ' + S_FIELDS + ' } }', { p: $('project').value || null }, f);
      const s = d.importSessionFile;
      state.sessions.set(s.id, s); renderSessions();
      $('status').textContent = 'Imported ' + f.name + '.';
      await openSession(s.id);
    } catch (err) { showError(err); }
  });

  // ---- layout: the sessions drawer (narrow screens), the theme, shortcuts
  const narrow = window.matchMedia('(max-width: 760px)');
  function setDrawer(open) {
    open = open && narrow.matches;
    document.body.classList.toggle('drawer', open);
    $('menu').setAttribute('aria-expanded', String(open));
    $('scrim').hidden = !open;
    if (open) { const cur = document.querySelector('#sessions button[aria-current=true]') || $('newtitle'); cur.focus(); }
  }
  $('menu').onclick = () => setDrawer(!document.body.classList.contains('drawer'));
  $('scrim').onclick = () => { setDrawer(false); $('menu').focus(); };
  narrow.addEventListener('change', () => setDrawer(false));
  $('sessions').addEventListener('click', (e) => { if (e.target.closest('button.s')) setDrawer(false); });
  // Theme: "system" follows prefers-color-scheme; light and dark force it.
  // Only an explicit choice is stored (localStorage, this origin).
  const THEMES = ['system', 'light', 'dark'];
  function applyTheme(t) {
    if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t; else delete document.documentElement.dataset.theme;
    const dark = t === 'dark' || (t !== 'light' && window.matchMedia('(prefers-color-scheme: dark)').matches);
    $('theme').setAttribute('aria-label', 'Theme: ' + t + (t === 'system' ? ' (' + (dark ? 'dark' : 'light') + ')' : ''));
    $('theme').title = 'Switch the theme (t)';
    $('theme').textContent = dark ? '☾' : '☀';
  }
  let theme = 'system';
  try { theme = localStorage.getItem('foya-theme') || 'system'; } catch (e) { /* storage off */ }
  applyTheme(theme);
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => applyTheme(theme));
  function nextTheme() {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    try { if (theme === 'system') localStorage.removeItem('foya-theme'); else localStorage.setItem('foya-theme', theme); } catch (e) { /* storage off */ }
    applyTheme(theme);
    $('status').textContent = 'Theme: ' + theme + '.';
  }
  $('theme').onclick = nextTheme;
  const keysDialog = () => { const d = $('keysdlg'); if (!d.open) d.showModal(); };
  $('keys').onclick = keysDialog;
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || e.defaultPrevented) return;
    const t = e.target;
    if (e.key === 'Escape' && document.body.classList.contains('drawer')) { e.preventDefault(); setDrawer(false); $('menu').focus(); return; }
    if (e.key === 'Escape' && t === $('input') && state.session && state.phase !== 'IDLE') { e.preventDefault(); $('stop').click(); return; }
    if (t.closest && (t.closest('input, textarea, select, [contenteditable=true]') || t.closest('dialog'))) return;
    const card = t.closest && t.closest('.approval:not(.question):not(.resolved)');
    if (card && ['a', 's', 'd'].includes(e.key)) {
      const label = { a: 'Approve', s: 'Approve for session', d: 'Deny' }[e.key];
      const b = [...card.querySelectorAll('button')].find((x) => x.textContent === label);
      if (b && !b.disabled) { e.preventDefault(); b.click(); }
      return;
    }
    switch (e.key) {
      case '?': e.preventDefault(); keysDialog(); break;
      case '/': e.preventDefault(); setDrawer(false); $('input').focus(); break;
      case 'n': e.preventDefault(); setDrawer(false); $('new').click(); break;
      case 'm': e.preventDefault(); setDrawer(!document.body.classList.contains('drawer')); break;
      case 't': e.preventDefault(); nextTheme(); break;
    }
  });

  window.foyaWeb = { gql, ws, state };
  performance.mark('foya:script-end');
  // A session named in the address opens at once, beside the sidebar's
  // query rather than after it (the first paint of a long session).
  const first = location.hash.slice(1);
  // The sidebar is read once the session is on screen: both at once would
  // share the kernel's time and delay the conversation.
  const opened = /^ses_[\w-]+$/.test(first) ? openSession(first).catch(() => openSession(null)) : Promise.resolve();
  opened.then(loadSidebar).then(() => {
    watchKernel();
    renderSessions(); renderModelPicker();
    return loadMcp();
  }).catch(showError);
})();
