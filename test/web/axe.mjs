// axeClean runs axe-core (the npm package locked here) on the page and
// throws on any serious or critical violation of the WCAG 2.x A/AA rules,
// in the light and the dark theme (prefers-color-scheme), leaving the page
// in the light one. The views test (views.mjs) checks the main views; the
// terminals and worktree checks use this for what they add.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function axeClean(page, view) {
  for (const scheme of ['dark', 'light']) {
    await page.emulateMedia({ colorScheme: scheme });
    if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
    const res = await page.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] }, resultTypes: ['violations'] }));
    const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    if (bad.length) {
      throw new Error('axe, ' + view + ', ' + scheme + ': ' + bad.map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' ' + (n.failureSummary || '').split('\n').slice(1, 2).join('')).join(' | ')).join('\n'));
    }
  }
  console.log('ok: axe clean on ' + view + ' (dark and light)');
}
