// Foya web with many sessions (see TestWebClientManySessions and
// BenchmarkWebSidebarMany): the kernel at BASE holds MANY top-level
// sessions, titled "Session <i>", half of them in the project PROJECT.
//
// MODE=check: the sidebar opens with every group counted but a bounded
// number of sessions in the page; "Show more" adds the next ones in order;
// a session renamed through the API is renamed in the sidebar; one opened
// from the address that the sidebar does not show yet is shown and marked
// current; a walk whose cursor is deleted between two pages starts again
// and lists every session left once; a kernelEvents subscription that
// starts after the list was read without it reads the list again; a
// session made while the first page is on its way stays.
//
// MODE=bench: the main-thread CPU of the page (from a Chromium trace, the
// top-level tasks of the renderer's main thread) to load with the sidebar
// drawn, and to take one kernel event (a session renamed through the API)
// until the sidebar shows it; RUNS loads (default 5), medians of the warm
// ones printed as "load-cpu-ms: <ms>" and "event-cpu-ms: <ms>".
import { chromium } from 'playwright-core';
import { until, untilEq } from './poll.mjs';
import { mainThreadCPU, pageTrace } from './trace.mjs';

const base = process.env.BASE;
const many = Number(process.env.MANY);
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };

async function api(query, variables) {
  const resp = await fetch(base + '/graphql', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + process.env.TOKEN },
    body: JSON.stringify({ query, variables }),
  });
  const out = await resp.json();
  if (out.errors) throw new Error(JSON.stringify(out.errors));
  return out.data;
}
const rename = (id, title) => api('mutation($id: ID!, $t: String) { updateSession(id: $id, input: { title: $t }) { id } }', { id, t: title });

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript((t) => { if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  // Every session, a page at a time (the check's kernel has a response limit
  // that the whole list does not fit).
  const sessions = [];
  for (let after = null; ;) {
    const page = (await api('query($a: ID) { sessions(first: 200, after: $a) { id title updatedAt project { id } } }', { a: after })).sessions;
    sessions.push(...page);
    if (page.length < 200) break;
    after = page[page.length - 1].id;
  }
  // (in ms: the kernel's times have from 0 to 9 fraction digits)
  const updated = new Map(sessions.map((s) => [s.title, Date.parse(s.updatedAt)]));
  // inOrder checks titles are the sidebar's order (newest update first),
  // each once.
  const inOrder = (titles, what) => {
    must(new Set(titles).size === titles.length, what + ': a session drawn twice');
    for (let i = 1; i < titles.length; i++) must(updated.get(titles[i - 1]) >= updated.get(titles[i]), what + ': ' + titles[i - 1] + ' before ' + titles[i]);
  };
  must(sessions.length === many, 'the kernel lists ' + sessions.length + ' sessions, want ' + many);
  const drawn = (page) => page.locator('#sessions button.s').count();
  // The sidebar is drawn once both groups are (the project's first).
  const sidebarReady = (page) => page.waitForFunction((n) => {
    const s = [...document.querySelectorAll('#sessions summary')].map((e) => e.textContent);
    return s.length === 2 && s.some((t) => t.includes('(' + n / 2 + ')'));
  }, many, { timeout: 60000 });

  if (process.env.MODE === 'bench') {
    const runs = Number(process.env.RUNS || 5);
    const loads = [], events = [];
    for (let i = 0; i < runs; i++) {
      const page = await ctx.newPage();
      page.setDefaultTimeout(60000);
      await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'loading'] });
      await page.goto(base + '/');
      await sidebarReady(page);
      await page.waitForTimeout(300);
      const loadTrace = JSON.parse((await browser.stopTracing()).toString());
      if (process.env.TRACE_DIR) (await import('node:fs')).writeFileSync(process.env.TRACE_DIR + '/load' + i + '.json', JSON.stringify(loadTrace));
      const lt = pageTrace(loadTrace);
      if (!lt.nav) throw new Error('trace without navigationStart');
      const pid = lt.nav.pid;
      const load = mainThreadCPU(lt, pid, lt.nav.ts);
      // One kernel event: the newest session renamed.
      const title = 'Renamed ' + i;
      await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', process.env.TRACE_DIR ? 'disabled-by-default-devtools.timeline.stack,v8.cpu_profiler' : ''].filter(Boolean) });
      await rename(sessions[0].id, title);
      await page.locator('#sessions button.s', { hasText: title }).first().waitFor();
      await page.waitForTimeout(300);
      const eventTrace = JSON.parse((await browser.stopTracing()).toString());
      if (process.env.TRACE_DIR) (await import('node:fs')).writeFileSync(process.env.TRACE_DIR + '/event' + i + '.json', JSON.stringify(eventTrace));
      const event = mainThreadCPU(pageTrace(eventTrace), pid);
      if (i > 0) { loads.push(load); events.push(event); }
      console.log('load ' + i + ': ' + Math.round(load) + ' ms of main-thread CPU, ' + (await drawn(page)) + ' sessions drawn; event: ' + Math.round(event) + ' ms');
      await page.close();
    }
    const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
    console.log('load-cpu-ms: ' + Math.round(med(loads)));
    console.log('event-cpu-ms: ' + Math.round(med(events)));
    console.log('ok: sidebar with ' + many + ' sessions measured');
  } else {
    const page = await ctx.newPage();
    page.setDefaultTimeout(60000);
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    step('the sidebar opens with every session counted and a bounded number drawn');
    await page.goto(base + '/');
    await sidebarReady(page);
    const n0 = await drawn(page);
    must(n0 > 0 && n0 <= 400, n0 + ' sessions drawn of ' + many);
    const groupTitles = async (g) => page.locator('#sessions details.group').nth(g).locator('button.s > span:first-child').allTextContents();
    const first = await groupTitles(0);
    inOrder(first, 'the project group');
    const newest = Math.max(...sessions.filter((s) => s.project).map((s) => Date.parse(s.updatedAt)));
    must(updated.get(first[0]) === newest, 'the project group starts with ' + first[0] + ', not its newest session');

    step('Show more draws the next sessions of the group, in order');
    await page.locator('#sessions details.group').nth(0).locator('button.more').click();
    const more = await until('more sessions in the project group', () => groupTitles(0), (t) => t.length > first.length);
    must(first.every((t, i) => more[i] === t), 'Show more changed the sessions drawn before it');
    inOrder(more, 'after Show more');

    step('a kernel event renames a session in the sidebar');
    await rename(sessions[0].id, 'Renamed newest');
    await page.locator('#sessions button.s', { hasText: 'Renamed newest' }).waitFor();

    step('a catalog change reads the catalog, not the session list');
    const asked = [];
    page.on('request', (r) => { const b = r.postData() || ''; if (r.url().endsWith('/graphql') && !b.includes('mutation')) asked.push(b); });
    await api('mutation { createConnection(input: { name: "second", baseUrl: "http://127.0.0.1:9/v1", models: [{ id: "m2" }] }) { id } }');
    await until('the new connection in the sidebar', () => page.locator('#connlist li').allTextContents(), (t) => t.some((x) => x.startsWith('second')));
    must(asked.length > 0 && asked.every((b) => !b.includes('sessions(')), 'queries after a catalog change: ' + asked.map((b) => b.slice(0, 80)).join(' | '));

    step('a session renamed while the WebSocket was down is renamed when it is back');
    // The socket closed and kept closed (its reconnect a no-op) until the
    // rename is done, then opened again.
    await page.evaluate(() => { const w = window.foyaWeb.ws; w.reconnect = w.connect; w.connect = () => {}; w.sock.close(); });
    await page.getByRole('status').filter({ hasText: 'Offline' }).waitFor();
    await rename(sessions[sessions.length - 2].id, 'Renamed while offline'); // Session 1, beyond the window until renamed
    await page.evaluate(() => { const w = window.foyaWeb.ws; w.connect = w.reconnect; w.connect(); });
    await page.locator('#sessions button.s', { hasText: 'Renamed while offline' }).waitFor();

    step('the filter keeps the sessions whose title contains its text');
    const beforeFilter = await drawn(page);
    const titles = () => page.locator('#sessions button.s > span:first-child').allTextContents();
    await page.fill('#sessionfilter', 'session 1997');
    await untilEq('the sessions drawn for "session 1997"', titles, ['Session 1997']);
    await untilEq('the groups for "session 1997"', () => page.locator('#sessions summary').allTextContents(), ['No project (1)']);
    await page.fill('#sessionfilter', 'Session 19');
    // 19, 190–199 and 1900–1998 (1999 was renamed): 55 in each group.
    await until('the sessions drawn for "Session 19"', titles, (t) => t.length === 110 && t.every((x) => x.startsWith('Session 19')));
    await untilEq('the groups for "Session 19"', () => page.locator('#sessions summary').evaluateAll((ss) => ss.map((e) => e.textContent.replace(/^.* \(/, '('))), ['(55)', '(55)']);
    await page.fill('#sessionfilter', 'no such title');
    await untilEq('the note that nothing matches', () => page.locator('#sessions p.help').allTextContents(), ['No session\u2019s title contains \u201cno such title\u201d.']);
    await page.fill('#sessionfilter', '');
    await until('the sessions drawn without a filter', () => drawn(page), (k) => k === beforeFilter);

    step('a session opened from the address that the sidebar did not draw is drawn and current');
    const oldest = sessions[sessions.length - 1];
    const other = await ctx.newPage();
    other.on('pageerror', (e) => errors.push(String(e)));
    await other.goto(base + '/#' + oldest.id);
    await sidebarReady(other);
    const current = () => other.locator('#sessions button.s[aria-current="true"]').evaluateAll((bs) => bs.map((b) => b.dataset.id));
    await untilEq('the current sessions in the sidebar', current, [oldest.id]);
    must((await drawn(other)) <= 201, (await drawn(other)) + ' sessions drawn');

    step('opening another session from the sidebar moves the mark, and the one beyond the window goes');
    await other.locator('#sessions button.s').first().click();
    const firstID = await other.locator('#sessions button.s').first().getAttribute('data-id');
    await untilEq('the current sessions in the sidebar', current, [firstID]);
    await until('the session beyond the window no longer drawn', () => other.locator('#sessions button.s[data-id="' + oldest.id + '"]').count(), (n) => n === 0);

    step('a walk whose page cursor is deleted between two pages walks again from the start');
    // The first request for a page after another (sessions(first:, after:))
    // waits until the session it names as its cursor is deleted.
    const third = await ctx.newPage();
    third.on('pageerror', (e) => errors.push(String(e)));
    let deleted = null; const cursors = [];
    await third.route('**/graphql', async (route) => {
      const body = route.request().postDataJSON() || {};
      if (/sessions\(first: \$n, after: \$a\)/.test(body.query || '')) {
        cursors.push(body.variables.a);
        if (deleted === null && body.variables.a) {
          deleted = body.variables.a;
          await api('mutation($id: ID!) { deleteSession(id: $id) }', { id: deleted });
        }
      }
      await route.continue();
    });
    await third.goto(base + '/');
    // counts are the session counts of a page's groups, from their headers.
    const counts = (p) => () => p.locator('#sessions summary').evaluateAll((ss) => ss.map((e) => Number(e.textContent.replace(/^.*\((\d+)\)$/, '$1'))));
    await until('the groups counting every session but the deleted one', counts(third), (c) => c.length === 2 && c[0] + c[1] === many - 1);
    must(deleted !== null && cursors.indexOf(null) > cursors.indexOf(deleted), 'the walk did not start again after its cursor was deleted: cursors ' + JSON.stringify(cursors.slice(0, 4)));
    must((await third.locator('#sessions button.s[data-id="' + deleted + '"]').count()) === 0, 'the deleted session is drawn');

    step('a session made before the kernel events start, over 3 s late, is drawn');
    // The page's kernelEvents subscription is held back for longer than the
    // page waits for it: the list is read without the events, a session is
    // made, and then the subscription goes on (its 'subscribed' must make
    // the page read the list again: no event tells of that session).
    const fourth = await ctx.newPage();
    fourth.on('pageerror', (e) => errors.push(String(e)));
    let held = null;
    await fourth.routeWebSocket('**/graphql', (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((m) => { if (held === null && /kernelEvents/.test(m)) held = () => server.send(m); else server.send(m); });
      server.onMessage((m) => ws.send(m));
    });
    await fourth.goto(base + '/');
    await until('the list read without the kernel events', counts(fourth), (c) => c.length === 2 && c[0] + c[1] === many - 1);
    must(held !== null, 'the kernelEvents subscription was not held back');
    await api('mutation { createSession(input: { title: "Made before the events" }) { id } }');
    held();
    await fourth.locator('#sessions button.s', { hasText: 'Made before the events' }).waitFor();

    step('a session made while the first page is on its way is drawn');
    // The first page is read by the kernel, then a session is made (its
    // event reaches the page), then the page gets that older first page:
    // the walk must keep the session the event told of.
    const fifth = await ctx.newPage();
    fifth.on('pageerror', (e) => errors.push(String(e)));
    let madeDuring = null;
    await fifth.route('**/graphql', async (route) => {
      const body = route.request().postDataJSON() || {};
      if (madeDuring !== null || !/sessions\(first: \$n\) \{/.test(body.query || '')) return route.continue();
      const response = await route.fetch();
      const text = await response.text();
      // (a page over this kernel's response limit is refused and asked
      // for again, shorter: the one that is answered is the first page)
      if (text.includes('"errors"')) return route.fulfill({ response, body: text });
      madeDuring = (await api('mutation { createSession(input: { title: "Made during the first page" }) { id } }')).createSession.id;
      await new Promise((r) => setTimeout(r, 500)); // (its event on the way to the page)
      await route.fulfill({ response, body: text });
    });
    await fifth.goto(base + '/');
    await until('the groups counting every session, the one made during the first page too', counts(fifth), (c) => c.length === 2 && c[0] + c[1] === many + 1);
    must((await fifth.locator('#sessions button.s', { hasText: 'Made during the first page' }).count()) === 1, 'the session made during the first page is not drawn');

    if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
    console.log('ok: ' + many + ' sessions in the sidebar');
  }
} finally {
  await browser.close();
}
