// Rebuilds dist/, the GraphiQL playground's files embedded in the foya
// binary (edge/web/playground.go), from the npm packages locked in
// package-lock.json: `node build.mjs` writes dist/, `node build.mjs --check`
// fails when dist/ differs from what the lock gives (TestPlaygroundAssetsFresh).
// Only the four packages the files come from are fetched (`npm pack` of the
// locked version, its tarball checked against the lock's integrity) and
// unpacked in a temporary directory, so no node_modules ever lands inside
// the Go module; the rest of the locked tree is not installed (an `npm ci`
// of its 113 packages took most of the check's time).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
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
  const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8'));
  const pkgs = [...new Set(Object.values(files).map((src) => src.split('/')[0]))];
  const specs = pkgs.map((pkg) => {
    const locked = lock.packages['node_modules/' + pkg];
    if (!locked?.version || !locked.integrity) throw new Error(`package-lock.json does not lock ${pkg}`);
    return { pkg, locked };
  });
  // One npm process for the four tarballs (npm's start is most of a pack).
  const packed = JSON.parse(execFileSync('npm', ['pack', ...specs.map(({ pkg, locked }) => `${pkg}@${locked.version}`), '--json', '--pack-destination', tmp, '--loglevel=error'],
    { cwd: tmp, stdio: ['ignore', 'pipe', 'inherit'] }));
  for (const [i, { pkg, locked }] of specs.entries()) {
    const got = packed[i];
    if (got?.name !== pkg || got.version !== locked.version || got.integrity !== locked.integrity) {
      throw new Error(`${pkg}@${locked.version}: the registry's tarball (${got?.name}@${got?.version} ${got?.integrity}) is not the one package-lock.json locks (${locked.integrity})`);
    }
    // npm tarballs hold one top directory (package/).
    const dir = join(tmp, 'node_modules', pkg);
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', join(tmp, got.filename), '-C', dir, '--strip-components=1'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
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
