// Rebuilds dist/, the GraphiQL playground's files embedded in the foya
// binary (edge/web/playground.go), from the npm packages locked in
// package-lock.json: `node build.mjs` writes dist/, `node build.mjs --check`
// fails when dist/ differs from what the lock gives (TestPlaygroundAssetsFresh).
// The packages are installed with `npm ci` in a temporary directory, so no
// node_modules ever lands inside the Go module.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// dist name <- file inside node_modules, verbatim (no transformation).
const files = {
  'react.production.min.js': 'react/umd/react.production.min.js',
  'react-dom.production.min.js': 'react-dom/umd/react-dom.production.min.js',
  'graphql-ws.min.js': 'graphql-ws/umd/graphql-ws.min.js',
  'graphiql.min.js': 'graphiql/graphiql.min.js',
  'graphiql.min.css': 'graphiql/graphiql.min.css',
};
const check = process.argv.includes('--check');
const tmp = mkdtempSync(join(tmpdir(), 'foya-playground-'));
try {
  cpSync(join(here, 'package.json'), join(tmp, 'package.json'));
  cpSync(join(here, 'package-lock.json'), join(tmp, 'package-lock.json'));
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
  const dist = join(here, 'dist');
  const stale = [];
  if (!check) { rmSync(dist, { recursive: true, force: true }); mkdirSync(dist); }
  for (const [name, src] of Object.entries(files)) {
    const want = readFileSync(join(tmp, 'node_modules', src));
    if (check) {
      let have = null;
      try { have = readFileSync(join(dist, name)); } catch { /* missing */ }
      if (!have || !have.equals(want)) stale.push(name);
    } else {
      writeFileSync(join(dist, name), want);
    }
  }
  if (check) {
    for (const name of readdirSync(dist)) if (!(name in files)) stale.push(name + ' (not built by build.mjs)');
    if (stale.length) {
      console.error('edge/web/playground/dist is stale: ' + stale.join(', ') + '\nrebuild with: cd edge/web/playground && node build.mjs');
      process.exit(1);
    }
    console.log('ok: dist matches package-lock.json');
  } else {
    console.log('wrote ' + Object.keys(files).map((n) => 'dist/' + n).join(', '));
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
