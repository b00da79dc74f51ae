// Foya web: DOM and formatting helpers shared by every module (no imports).
// The first module of app.js's graph to run after boot.js, so the
// script-start mark is here.
performance.mark('foya:script-start');
export const $ = (id) => document.getElementById(id);
export const esc = (s) => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
export function el(tag, cls, html) { const e = document.createElement(tag); if (cls) e.className = cls; if (html != null) e.innerHTML = html; return e; }
// fmtDuration: 850 ms, 1.2 s, 2 min 5 s.
export function fmtDuration(ms) {
  if (!(ms >= 0)) return '';
  if (ms < 1000) return Math.round(ms) + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}
// copyText copies with the Clipboard API (a secure context: loopback or
// https), else through a selected textarea; the button says it worked.
export async function copyText(text, btn) {
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
export function utf8Len(s) { return new TextEncoder().encode(s).length; }
export function fmtBytes(n) { return n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KB' : (n / 1048576).toFixed(1) + ' MB'; }
export function fmtTokens(n) { return n < 1000 ? String(n) : n < 1e6 ? (n / 1000).toFixed(1) + 'k' : (n / 1e6).toFixed(2) + 'M'; }
export function fmtCost(c) { return c == null ? '—' : '$' + (c >= 1 ? c.toFixed(2) : c >= 0.01 ? c.toFixed(3) : c === 0 ? '0' : c.toPrecision(2)); }

// afterPaint runs fn once the frame being prepared has been painted.
export function afterPaint(fn) { requestAnimationFrame(() => setTimeout(fn, 0)); }
// A session without a title is "New session" until the kernel names it
// (after its first turn): never its raw id.
export function titleOf(s) { return (s && s.title) || 'New session'; }
