// Foya web against a kernel that requires its token (TOKEN): the page asks
// for it (a prompt), keeps it in sessionStorage only, and uses it for POST
// and for the WebSocket (kernelEvents then shows a session created elsewhere).
import { chromium } from 'playwright-core';

const base = process.env.BASE;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(20000);
  let prompts = 0;
  page.on('dialog', (d) => { prompts++; d.accept(process.env.TOKEN); });
  await page.goto(base + '/');
  await page.waitForFunction(() => window.foyaWeb.ws.acked === true);
  if (prompts !== 1) throw new Error('prompts: ' + prompts);
  const stored = await page.evaluate(() => [sessionStorage.getItem('foya-token'), localStorage.length, document.cookie]);
  if (stored[0] !== process.env.TOKEN || stored[1] !== 0 || stored[2] !== '') throw new Error('token storage: ' + JSON.stringify([!!stored[0], stored[1], stored[2]]));
  console.log('ready');
  // The Go side now creates a session over the API; the sidebar shows it live.
  await page.locator('#sessions button').filter({ hasText: 'made elsewhere' }).waitFor();
  console.log('ok: token asked once, kept in sessionStorage, used over POST and WebSocket');
} finally {
  await browser.close();
}
