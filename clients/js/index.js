// A thin client for the compactor memory store, for agents written in JavaScript.
//
// It runs `compactor memory` (the compactor command named by COMPACTOR_BIN, else
// `compactor` on PATH) and parses its JSON. Text always travels on stdin (`--stdin`), never in argv,
// where it would be visible to other users and limited in size. Standard library only.

import { spawn } from 'node:child_process';

/** The CLI's exit code for text over 256 KiB (error id `memory_too_large`). */
export const MEMORY_TOO_LARGE_EXIT_CODE = 65;

/** How much of the CLI's stdout is read before the call is abandoned: 32 MiB. */
export const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

/** A refusal or failure of the CLI: its exit code, error id and message. */
export class MemoryError extends Error {
  constructor(message, { exitCode = null, errorId = null, stderr = '' } = {}) {
    super(message);
    this.name = 'MemoryError';
    this.exitCode = exitCode;
    this.errorId = errorId;
    this.stderr = stderr;
  }
}

/**
 * Remember `text`. Resolves to `{id, created_at, created}`.
 * Rejects with a MemoryError; `exitCode === MEMORY_TOO_LARGE_EXIT_CODE` for text over 256 KiB.
 */
export async function remember(text, options = {}) {
  return json(await run(['remember', '--stdin'], options, text));
}

/**
 * The current memories that best match `query`. Resolves to `{hits: [...]}`.
 * `tokenBudget`: omitted means 2000, 0 means unlimited, a negative one is refused by the CLI.
 */
export async function recall(query, { limit, tokenBudget, ...options } = {}) {
  const args = ['recall', String(query)];
  if (limit !== undefined) args.push('--limit', String(limit));
  if (tokenBudget !== undefined) args.push('--token-budget', String(tokenBudget));
  return json(await run(args, options));
}

/** Replace the current memory `id` by a new version holding `text`. Resolves to the new version. */
export async function supersede(id, text, options = {}) {
  return json(await run(['supersede', String(id), '--stdin'], options, text));
}

/** Every version of a memory, oldest first. Resolves to `{history: [...], basis}` (and, for this release, the same list as `versions`). */
export async function history(id, options = {}) {
  return json(await run(['history', String(id)], options));
}

/** Delete one version. Resolves to `{forgotten: true|false}`. */
export async function forget(id, options = {}) {
  return json(await run(['forget', String(id)], options));
}

/** The exact bytes behind a hit's `recovery_handle`, as a Buffer. */
export async function recover(handle, options = {}) {
  return run(['recover', String(handle)], options);
}

/**
 * Run `compactor memory` with `args`; resolve to its stdout (a Buffer) when it exits 0.
 * Options: `bin`, the compactor command (default COMPACTOR_BIN or `compactor`), `db`, `ccrStore`, `env`.
 */
export function run(args, { bin, db, ccrStore, env } = {}, input = null) {
  const command = bin ?? process.env.COMPACTOR_BIN ?? 'compactor';
  const global = ['memory'];
  if (db !== undefined) global.push('--db', String(db));
  if (ccrStore !== undefined) global.push('--ccr-store', String(ccrStore));
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...global, ...args], {
      env: env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    let outBytes = 0;
    let overflow = false;
    let spawnError = null;
    child.on('error', (error) => {
      spawnError = error;
    });
    child.stdout.on('data', (chunk) => {
      outBytes += chunk.length;
      if (outBytes > MAX_OUTPUT_BYTES) {
        overflow = true;
        child.kill();
        return;
      }
      out.push(chunk);
    });
    child.stderr.on('data', (chunk) => err.push(chunk));
    // The CLI stops reading once it has seen too much; the write then fails with
    // EPIPE. That is not the answer: the exit code (65) that follows is.
    child.stdin.on('error', (error) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') spawnError = spawnError ?? error;
    });
    if (input === null) {
      child.stdin.end();
    } else {
      child.stdin.end(typeof input === 'string' ? Buffer.from(input, 'utf8') : input);
    }
    child.on('close', (code, signal) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (spawnError && (code === null || code < 0)) {
        reject(new MemoryError(`cannot run ${command}: ${spawnError.message}`, { stderr }));
      } else if (overflow) {
        reject(new MemoryError(`${command} wrote more than ${MAX_OUTPUT_BYTES} bytes`, { exitCode: code, stderr }));
      } else if (code !== 0) {
        const found = /^compactor: ([a-z0-9_]+): (.*)$/m.exec(stderr);
        const message = found ? found[2] : stderr.trim() || `${command} exited with ${code ?? signal}`;
        reject(new MemoryError(message, { exitCode: code, errorId: found ? found[1] : null, stderr }));
      } else {
        resolve(Buffer.concat(out));
      }
    });
  });
}

function json(buffer) {
  return JSON.parse(buffer.toString('utf8'));
}
