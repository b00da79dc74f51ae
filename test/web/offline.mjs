// Foya web while the kernel restarts: the page shows it is offline, then
// reconnects and resumes the session's events after the last seq it showed.
// Protocol with the Go test over stdout/stdin: prints "ready", waits for a
// line (kernel stopped), prints "offline", waits for a line (kernel back and a
// message sent), then checks the reply arrives without duplicates.
import { chromium } from 'playwright-core';
import readline from 'node:readline';
import { until } from './poll.mjs';

const base = process.env.BASE;
const rl = readline.createInterface({ input: process.stdin });
const lines = rl[Symbol.asyncIterator]();
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  await page.addInitScript((t) => sessionStorage.setItem('foya-token', t), process.env.TOKEN);
  page.setDefaultTimeout(30000);
  await page.goto(base + '/#' + process.env.SESSION);
  const log = page.getByRole('log');
  await log.locator('.msg.assistant').filter({ hasText: 'before restart' }).waitFor();
  await page.waitForFunction(() => window.foyaWeb.ws.acked === true);
  console.log('ready');
  await lines.next();
  await page.getByRole('status').filter({ hasText: 'Offline' }).waitFor();
  console.log('offline');
  await lines.next();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'after restart' }).waitFor();
  await page.waitForFunction(() => document.getElementById('status').textContent === '');
  const seqs = await until('4 messages, each once', () => page.locator('#log .msg[data-seq]').evaluateAll((els) => els.map((e) => e.dataset.seq)),
    (ss) => new Set(ss).size === ss.length && ss.length === 4);
  console.log('ok: offline shown, resumed after seq, ' + seqs.length + ' messages');
} finally {
  await browser.close();
  rl.close();
}
