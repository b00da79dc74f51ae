// First paint of a long session in Foya web (see BenchmarkWebFirstPaint):
// THOUSAND, a session of 1,000 messages, is opened RUNS times (default 7)
// in a fresh page each time; for each load the time from navigation start to
// the paint of its last message is taken, and the median printed as
// "paint-ms: <median>". The paint time is the Element Timing renderTime of
// the last message (the page marks it as it is inserted), else the frame
// after it is in the log.
import { chromium } from 'playwright-core';

const base = process.env.BASE;
const runs = Number(process.env.RUNS || 7);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript(([t, last]) => {
    if (!location.protocol.startsWith('http')) return;
    if (!sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t);
    window.__paint = new Promise((resolve) => {
      let fallback = null;
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) if (e.identifier === 'last' && e.renderTime) resolve(e.renderTime);
      }).observe({ type: 'element', buffered: true });
      new MutationObserver((_, obs) => {
        const el = document.querySelector('#log .msg[data-seq="' + last + '"]');
        if (!el) return;
        obs.disconnect();
        // Element Timing reports the text of an element marked before it paints.
        for (const x of el.querySelectorAll('p, li, .text, div')) x.setAttribute('elementtiming', 'last');
        el.setAttribute('elementtiming', 'last');
        requestAnimationFrame(() => setTimeout(() => { fallback = performance.now(); setTimeout(() => resolve(fallback), 500); }, 0));
      }).observe(document, { childList: true, subtree: true });
    });
  }, [process.env.TOKEN, process.env.LAST || '1001']);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const page = await ctx.newPage();
    page.setDefaultTimeout(30000);
    await page.goto(base + '/#' + process.env.THOUSAND);
    const t = await page.evaluate(() => window.__paint);
    times.push(Math.round(t));
    if (process.env.DETAIL) {
      // Where the time went: the page's requests (start → end) and DOMContentLoaded.
      console.log(Math.round(t) + ' ms: ' + await page.evaluate(() => {
        const r = performance.getEntriesByType('resource').map((e) => e.name.replace(/^.*\//, '') + ' ' + Math.round(e.startTime) + '→' + Math.round(e.responseEnd));
        const n = performance.getEntriesByType('navigation')[0];
        return 'dcl ' + Math.round(n.domContentLoadedEventEnd) + '; ' + r.join('; ') + '; ' + performance.getEntriesByType('mark').map((m) => m.name + ' ' + Math.round(m.startTime)).join('; ');
      }));
    }
    await page.close();
  }
  times.sort((a, b) => a - b);
  console.log('paint-ms: ' + times[Math.floor(times.length / 2)] + ' (runs ' + times.join(', ') + ' ms, from navigation start)');
  console.log('ok: first paint measured');
} finally {
  await browser.close();
}
