// Foya web: layout. The sessions drawer on narrow screens, the theme
// (system, light, dark) and the keyboard shortcuts.
import { $ } from './dom.js';
import { state } from './state.js';

// ---- layout: the sessions drawer (narrow screens), the theme, shortcuts
const narrow = window.matchMedia('(max-width: 760px)');
export function setDrawer(open) {
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

