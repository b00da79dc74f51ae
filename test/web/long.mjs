// Long sessions in Foya web (see TestWebClientLongSession): LONG, a session
// of 5,000 messages, opens on its end having read one page; scrolling to the
// top pages back with messages(last:, beforeSeq:) and keeps what was on
// screen in place. (The first paint of a 1,000-message session is measured
// by paint.mjs, run by BenchmarkWebFirstPaint.)
import { chromium } from 'playwright-core';
import { until } from './poll.mjs';

const base = process.env.BASE;
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript((t) => { if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const history = []; // the messages arguments of every query the page sends
  page.on('request', (r) => {
    const body = r.postData() || '';
    const m = body.match(/messages\(([^)]*)\)/);
    if (m && body.includes('session(id')) history.push(m[1] + ' ' + JSON.stringify((JSON.parse(body).variables || {})));
  });
  const seqs = () => page.locator('#log .msg[data-seq]').evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));

  step('a 5,000-message session opens on its end');
  await page.goto(base + '/#' + process.env.LONG);
  const last = page.locator('#log .msg[data-seq="5001"]');
  await last.waitFor();
  // The page's first messages go in after the first paint, then the button
  // that pages back.
  await page.locator('#log button.earlier').waitFor({ state: 'attached' });
  const first = await seqs();
  must(first.length <= 100, 'rendered ' + first.length + ' messages on open');
  await page.waitForFunction(() => { const l = document.getElementById('log'); return l.scrollHeight - l.scrollTop - l.clientHeight < 4; });
  must(history.length >= 1 && /last/.test(history[0]) && !/first/.test(history[0]), 'first read: ' + history[0]);

  step('scrolling to the top pages back, in place, without gaps or duplicates');
  for (let i = 0; i < 3; i++) {
    const before = await seqs();
    const top = before[0];
    const anchor = page.locator('#log .msg[data-seq="' + top + '"]');
    await page.locator('#log').evaluate((l) => { l.scrollTop = 0; });
    await page.waitForFunction((n) => document.querySelectorAll('#log .msg[data-seq]').length > n, before.length);
    const after = await seqs();
    for (let j = 1; j < after.length; j++) must(after[j] === after[j - 1] + 1, 'gap or duplicate at ' + after[j - 1] + ' → ' + after[j]);
    must(after[after.length - 1] === 5001, 'the end moved');
    // The message that was at the top is still on screen, not thrown to the end.
    await until('the message that was at the top (' + top + ') still on screen', () => anchor.boundingBox(), (box) => box && box.y > 0 && box.y < 800, 5000);
  }
  must(history.slice(1).every((h) => /last/.test(h) && /beforeSeq/.test(h)), 'paging queries: ' + history.join(' | '));
  must((await seqs()).length < 1000, 'read more than the pages asked for');

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: long session paged back ' + (history.length - 1) + ' times');
} finally {
  await browser.close();
}
