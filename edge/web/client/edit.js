// Foya web: edit-and-resend of a user message and rewind (with its preview
// of the files that will be put back).
import { gql, showError } from './api.js';
import { renderAttachments } from './composer.js';
import { $, el, esc, utf8Len } from './dom.js';
import { wholeText } from './messages.js';
import { ATT_FIELDS, state } from './state.js';

// ---- edit and resend: the user message becomes an inline editor; Send
// rewinds to before it (the rewind preview is shown when files changed
// since) and sends the edited text, with the message's attachments, as a
// new message.
export async function editMessage(div, m) {
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
export async function rewind(seq, resend) {
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
