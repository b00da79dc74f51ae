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
  // The web link (foya web, the kernel's log): the token comes in the
  // fragment, is kept in sessionStorage and leaves the address bar and the
  // history; no prompt, and the CSP lets the page work.
  const page2 = await browser.newPage();
  page2.setDefaultTimeout(20000);
  const csp = [];
  page2.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) csp.push(m.text()); });
  page2.on('dialog', (d) => { prompts++; d.dismiss(); });
  await page2.addInitScript(() => { window.__csp = []; document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective)); });
  await page2.goto(base + '/#token=' + encodeURIComponent(process.env.TOKEN));
  await page2.waitForFunction(() => window.foyaWeb.ws.acked === true);
  const seen = await page2.evaluate(() => [sessionStorage.getItem('foya-token'), location.href, history.length]);
  if (seen[0] !== process.env.TOKEN || seen[1].includes('token') || seen[1] !== base + '/' || prompts !== 1) {
    throw new Error('web link: ' + JSON.stringify([!!seen[0], seen[1].includes('token'), seen[1] === base + '/', prompts]));
  }
  await page2.locator('#sessions button').filter({ hasText: 'made elsewhere' }).waitFor();
  if (csp.length) throw new Error('CSP violations: ' + csp.join('\n'));
  const reported = await page2.evaluate(() => window.__csp.slice());
  if (reported.length) throw new Error('CSP violations reported: ' + reported.join(', '));
  // The policy is in force: an inline script does not run, and is reported.
  await page2.evaluate(() => { const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true'; document.body.appendChild(s); });
  await page2.waitForFunction(() => window.__csp.some((d) => d.startsWith('script-src')));
  if (await page2.evaluate(() => !!window.__inlineRan)) throw new Error('an inline script ran under the policy');
  console.log('ok: token asked once, kept in sessionStorage, used over POST and WebSocket; the web link needs no prompt and leaves no token in the address bar');
} finally {
  await browser.close();
}
