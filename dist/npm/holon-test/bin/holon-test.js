#!/usr/bin/env node
// `holon-test` for npm: runs the binary of the platform package npm installed beside this one
// (one of the optionalDependencies, picked by their `os`, `cpu` and `libc`), or the one
// `HOLON_TEST_BINARY` names. The binary is the same `holon-test` the wheel carries.
'use strict';

const { spawn } = require('node:child_process');
const { statSync } = require('node:fs');

const PACKAGES = {
  'darwin-arm64': '@holon-kit/holon-test-darwin-arm64',
  'darwin-x64': '@holon-kit/holon-test-darwin-x64',
  'linux-arm64': '@holon-kit/holon-test-linux-arm64',
  'linux-x64': '@holon-kit/holon-test-linux-x64',
};

const ALTERNATIVES =
  'install the wheel (`pip install holon-test`), build it with Rust (`cargo install holon-kit`), or set HOLON_TEST_BINARY to a holon-test binary';

function fail(message) {
  process.stderr.write(`holon-test: ${message}\n`);
  process.exit(1);
}

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function binary() {
  const named = process.env.HOLON_TEST_BINARY;
  if (named !== undefined && named !== '') {
    if (!isFile(named)) {
      fail(`HOLON_TEST_BINARY is \`${named}\`, which is not a file`);
    }
    return named;
  }
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  if (name === undefined) {
    fail(`no prebuilt binary for ${platform}: ${ALTERNATIVES}`);
  }
  try {
    return require.resolve(`${name}/holon-test`);
  } catch {
    // npm skips an optional dependency whose `libc` does not match (musl), or all of them with
    // `--omit=optional`.
    fail(`the package ${name} is not installed (a musl libc, or \`--omit=optional\`?): ${ALTERNATIVES}`);
  }
}

const path = binary();
// The handlers are in place before the binary starts: a signal that came between the two would
// end this process by its default action and leave the binary running, with no one to stop it.
// A terminal's Ctrl-C reaches the whole foreground group, the binary included: it stops its
// servers and exits, and this process follows. A signal sent to this process alone is passed on.
let child = null;
function endAs(signal) {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => (child === null ? endAs(signal) : child.kill(signal)));
}
// `HOLON_TEST_LAUNCHER` tells the binary it was started from an npm project, so the commands it
// prints begin as the author can paste them (`npx holon-test ...`), not with a bare `holon-test`
// that is not on their PATH.
child = spawn(path, process.argv.slice(2), {
  stdio: 'inherit',
  env: { ...process.env, HOLON_TEST_LAUNCHER: 'npm' },
});
child.on('error', (e) => fail(`cannot run \`${path}\`: ${e.message}`));
child.on('exit', (code, signal) => {
  if (signal !== null) {
    endAs(signal);
    return;
  }
  process.exit(code ?? 1);
});
