// Foya web: safe Markdown (everything escaped first), a small syntax
// highlighter for code blocks, and unified diffs.
import { esc } from './dom.js';

// ---- safe Markdown: escape everything, then add code blocks, inline code, bold, italics, links.
function inline(s) {
  return s.replace(/`([^`\n]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\n]+)\*/g, '$1<em>$2</em>')
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)"]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
}
export function markdown(src) {
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
export function highlight(code, lang) {
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
export function diffHTML(d) {
  return '<div class="tlabel">Diff</div><pre class="diff" aria-label="Diff">' + String(d).replace(/\n$/, '').split('\n').map((l) => {
    const c = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : 'ctx';
    return '<span class="' + c + '">' + (esc(l) || ' ') + '</span>';
  }).join('') + '</pre>';
}
