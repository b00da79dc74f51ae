// Foya web: the open session's background terminals (docs/terminals.md):
// each with its command, status and live output (terminal_output events,
// terminalOutput for what came before or was missed) and a kill button.
import { gql, showError } from './api.js';
import { $, el, fmtBytes } from './dom.js';
import { state } from './state.js';

// SHOWN is how much of each terminal's output the page keeps.
const SHOWN = 65536;
const T_FIELDS = 'id command cwd status exitCode outputBytes droppedBytes';
// terms: terminal id → { t (the Terminal), next (offset shown up to), box }.
let terms = new Map();

// loadTerminals shows the terminals of session id and their output so far.
export async function loadTerminals(id) {
  terms = new Map();
  $('termlist').innerHTML = '';
  $('terminals').hidden = true;
  if (!id) return;
  let d;
  try { d = await gql('query($id: ID!) { session(id: $id) { terminals { ' + T_FIELDS + ' } } }', { id }); } catch (e) { return; }
  if (state.session !== id || !d.session) return;
  for (const t of d.session.terminals) { upsert(t); catchUp(id, t.id); }
}

// onTerminalEvent handles terminal_started, terminal_output and terminal_exited.
export function onTerminalEvent(ev) {
  if (ev.terminal) {
    // Its output events all come before terminal_exited: a gap then is output missed.
    const v = upsert(ev.terminal);
    if (ev.terminal.status !== 'RUNNING' && v.next < ev.terminal.outputBytes) catchUp(state.session, ev.terminal.id);
  }
  const o = ev.terminalOutput;
  if (!o) return;
  const v = terms.get(o.terminalId);
  if (!v) { catchUp(state.session, o.terminalId); return; }
  if (o.offset === v.next) { append(v, o.text); v.next += utf8Bytes(o.text); } else if (o.offset > v.next) catchUp(state.session, o.terminalId);
}

function utf8Bytes(s) { return new TextEncoder().encode(s).length; }

// catchUp reads a terminal's output from what is shown on.
async function catchUp(sid, tid) {
  for (;;) {
    const v = terms.get(tid);
    let d;
    try {
      d = await gql('query($s: ID!, $t: ID!, $a: Int) { terminalOutput(sessionId: $s, terminalId: $t, afterOffset: $a) { text offset nextOffset droppedBytes more terminal { ' + T_FIELDS + ' } } }', { s: sid, t: tid, a: v ? v.next : 0 });
    } catch (e) { return; }
    if (state.session !== sid) return;
    const o = d.terminalOutput, w = upsert(o.terminal);
    if (o.offset < w.next) return; // live events got there first
    if (o.droppedBytes) append(w, '[… ' + fmtBytes(o.droppedBytes) + ' of older output dropped …]\n');
    append(w, o.text); w.next = o.nextOffset;
    if (!o.more) return;
  }
}

// upsert adds or updates the terminal's entry and returns its view.
function upsert(t) {
  let v = terms.get(t.id);
  if (!v) {
    const box = el('li', 'term'); box.dataset.id = t.id;
    const head = el('div', 'termhead');
    const cmd = el('code', 'termcmd'); cmd.textContent = t.command; cmd.title = t.cwd;
    const status = el('span', 'termstatus'); status.setAttribute('role', 'status');
    const kill = el('button'); kill.type = 'button'; kill.textContent = 'Kill'; kill.setAttribute('aria-label', 'Kill terminal ' + t.command);
    kill.onclick = async () => {
      kill.disabled = true;
      try {
        const d = await gql('mutation($s: ID!, $t: ID!) { killTerminal(sessionId: $s, terminalId: $t) { ' + T_FIELDS + ' } }', { s: state.session, t: t.id });
        upsert(d.killTerminal);
      } catch (e) { kill.disabled = false; showError(e); }
    };
    head.append(cmd, ' ', status, ' ', kill);
    const out = el('pre', 'termout'); out.setAttribute('aria-label', 'Output of ' + t.command); out.tabIndex = 0;
    box.append(head, out);
    $('termlist').appendChild(box);
    v = { t, next: 0, box, status, kill, out };
    terms.set(t.id, v);
    $('terminals').hidden = false;
  }
  v.t = t;
  const how = t.status === 'RUNNING' ? 'running' : t.status === 'KILLED' ? 'killed' : 'exited ' + (t.exitCode == null ? '' : t.exitCode);
  v.status.textContent = how + ' · ' + fmtBytes(t.outputBytes) + (t.droppedBytes ? ' (' + fmtBytes(t.droppedBytes) + ' dropped)' : '');
  v.box.dataset.status = t.status;
  v.kill.hidden = t.status !== 'RUNNING';
  return v;
}

function append(v, text) {
  if (!text) return;
  const out = v.out, atBottom = out.scrollHeight - out.scrollTop - out.clientHeight < 20;
  let s = out.textContent + text;
  if (s.length > SHOWN) s = s.slice(s.length - SHOWN);
  out.textContent = s;
  if (atBottom) out.scrollTop = out.scrollHeight;
}
