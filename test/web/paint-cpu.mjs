// CPU spent by the page's main thread to show a long session (see
// BenchmarkWebFirstPaintCPU): THOUSAND, a session of 1,000 messages, is
// opened RUNS times (default 7) in a fresh page with a Chromium trace
// running; for each load the thread time of the renderer's main thread from
// navigation start to the end of the first frame painted after the session
// is rendered (the foya:session-rendered mark) is summed, and the median of
// the warm loads (all but the first) printed as "cpu-ms: <median>". Unlike
// the wall-clock paint time, this hardly moves with the machine's load.
import { chromium } from 'playwright-core';
import { mainThreadCPU, pageTrace } from './trace.mjs';

const base = process.env.BASE;
const runs = Number(process.env.RUNS || 7);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript(([t]) => {
    if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t);
  }, [process.env.TOKEN]);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const page = await ctx.newPage();
    page.setDefaultTimeout(30000);
    await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'loading'] });
    await page.goto(base + '/#' + process.env.THOUSAND);
    await page.waitForSelector('#log .msg[data-seq="' + (process.env.LAST || '1001') + '"]');
    await page.waitForTimeout(200);
    const t = pageTrace(JSON.parse((await browser.stopTracing()).toString()));
    const { events: ev, onMain, nav } = t;
    const mark = ev.find((e) => e.name === 'foya:session-rendered');
    if (!nav || !mark) throw new Error('trace without navigationStart or the foya:session-rendered mark');
    const paint = ev.filter((e) => e.ph === 'X' && e.name === 'Paint' && onMain(e) && e.ts > mark.ts).sort((a, b) => a.ts - b.ts)[0];
    const end = paint ? paint.ts + paint.dur : mark.ts;
    const cpu = mainThreadCPU(t, nav.pid, nav.ts, end);
    if (i > 0) times.push(Math.round(cpu));
    await page.close();
  }
  times.sort((a, b) => a - b);
  console.log('cpu-ms: ' + times[Math.floor(times.length / 2)] + ' (warm loads ' + times.join(', ') + ' ms of main-thread CPU)');
  console.log('ok: first paint CPU measured');
} finally {
  await browser.close();
}
