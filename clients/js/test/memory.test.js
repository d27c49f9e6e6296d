// The client against the real `compactor memory` CLI (COMPACTOR_BIN, else the project's .venv, else PATH).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  MEMORY_TOO_LARGE_EXIT_CODE,
  MemoryError,
  forget,
  history,
  recall,
  recover,
  remember,
  supersede,
} from '../index.js';

const here = dirname(fileURLToPath(import.meta.url));
const venvBin = resolve(here, '..', '..', '..', '.venv', 'bin', 'compactor');
const BIN = process.env.COMPACTOR_BIN ?? (existsSync(venvBin) ? venvBin : 'compactor');

const made = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function home() {
  const dir = mkdtempSync(join(tmpdir(), 'memory-js-'));
  made.push(dir);
  return { bin: BIN, env: { ...process.env, COMPACTOR_HOME: dir, COMPACTOR_MEMORY_DB: join(dir, 'memory.db') } };
}

async function refused(promise) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof MemoryError, String(error));
    return error;
  }
  assert.fail('expected the CLI to refuse');
}

test('remember then recall finds the memory, and an off-topic query finds nothing', async () => {
  const opts = home();
  const fact = 'The billing worker retries webhooks five times with exponential backoff';
  const done = await remember(fact, opts);
  assert.match(done.id, /^mem_[0-9a-f]{16}$/);
  assert.equal(done.created, true);
  assert.equal((await remember(fact, opts)).created, false);
  const { hits } = await recall('billing webhooks retries', opts);
  assert.deepEqual(hits.map((h) => h.id), [done.id]);
  assert.equal(hits[0].text, fact);
  assert.equal(hits[0].basis, 'inferred');
  assert.deepEqual(await recall('graphics card drivers', opts), { hits: [], basis: 'inferred' });
});

test('text travels on stdin, never in argv', async () => {
  const opts = home();
  const log = join(opts.env.COMPACTOR_HOME, 'argv.log');
  const wrapper = join(opts.env.COMPACTOR_HOME, 'compactor-wrapper');
  writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$@" >> '${log}'\nexec '${BIN}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  const secret = 'the staging password rotates on Mondays (unique-marker-7f3a)';
  const done = await remember(secret, { ...opts, bin: wrapper });
  await supersede(done.id, secret + ' and Thursdays', { ...opts, bin: wrapper });
  const argv = readFileSync(log, 'utf8');
  assert.deepEqual(argv.split('\n').slice(0, 3), ['memory', 'remember', '--stdin']);
  assert.ok(argv.includes('--stdin'));
  assert.ok(!argv.includes('unique-marker-7f3a'), argv);
});

test('text over 256 KiB is refused with exit 65, even when the CLI stops reading mid-write (EPIPE)', async () => {
  assert.equal(MEMORY_TOO_LARGE_EXIT_CODE, 65);
  const opts = home();
  const error = await refused(remember('x'.repeat(8 * 1024 * 1024), opts));
  assert.equal(error.exitCode, MEMORY_TOO_LARGE_EXIT_CODE);
  assert.equal(error.errorId, 'memory_too_large');
  const justOver = await refused(remember('y'.repeat(256 * 1024 + 1), opts));
  assert.equal(justOver.exitCode, MEMORY_TOO_LARGE_EXIT_CODE);
  assert.equal((await remember('y'.repeat(256 * 1024), opts)).created, true);
});

test('token budget: omitted is 2000, explicit 0 is unlimited, negative is refused', async () => {
  const opts = home();
  const words = Array.from({ length: 6000 }, (_, i) => `row${i}`).join(' ');
  const big = `ledger ${words}`;
  await remember(big, opts);
  const unlimited = await recall('ledger', { ...opts, tokenBudget: 0 });
  assert.equal(unlimited.hits[0].text, big);
  assert.equal(unlimited.hits[0].recovery_handle, undefined);
  const byDefault = await recall('ledger', opts);
  assert.ok(byDefault.hits[0].tokens_added <= 2000);
  assert.match(byDefault.hits[0].recovery_handle, /^ccr_[0-9a-f]{32}$/);
  const whole = await recover(byDefault.hits[0].recovery_handle, opts);
  assert.ok(Buffer.isBuffer(whole));
  assert.equal(whole.toString('utf8'), big);
  const negative = await refused(recall('ledger', { ...opts, tokenBudget: -1 }));
  assert.equal(negative.exitCode, 2);
  assert.equal(negative.errorId, 'usage_error');
});

test('supersede, history and forget', async () => {
  const opts = home();
  const v1 = (await remember('the deploy freeze starts on the 20th', opts)).id;
  const v2 = await supersede(v1, 'the deploy freeze starts on the 18th', opts);
  assert.equal(v2.supersedes, v1);
  const chain = await history(v1, opts);
  assert.deepEqual(chain.history.map((v) => v.id), [v1, v2.id]);
  assert.deepEqual(chain.versions, chain.history); // the old key, for this release
  const stale = await refused(supersede(v1, 'the deploy freeze starts on the 15th', opts));
  assert.equal(stale.errorId, 'memory_not_current');
  assert.deepEqual(await forget(v2.id, opts), { forgotten: true, basis: 'inferred' });
  assert.deepEqual(await forget(v2.id, opts), { forgotten: false, basis: 'inferred' });
  const missing = await refused(history(v2.id, opts));
  assert.equal(missing.exitCode, 66);
});

test('a missing CLI is a MemoryError that says so', async () => {
  const error = await refused(remember('anything', { bin: '/nonexistent/compactor' }));
  assert.equal(error.exitCode, null);
  assert.match(error.message, /cannot run/);
});
