// Writes the npm package of one platform's `holon-test` binary into a folder, ready for
// `npm pack`: the binary, and a package.json whose `os`, `cpu` (and on Linux `libc`) fields let
// npm install it only where it runs. Its version is the launcher's (dist/npm/holon-test), which
// lists it among its optionalDependencies.
//
//   node dist/npm/platform.mjs BINARY OUT-DIR [PLATFORM]    # PLATFORM: linux-x64, darwin-arm64...
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [binary, out, platform = `${process.platform}-${process.arch}`] = process.argv.slice(2);
if (!binary || !out) {
  console.error('usage: node dist/npm/platform.mjs BINARY OUT-DIR [PLATFORM]');
  process.exit(2);
}
const launcher = JSON.parse(readFileSync(new URL('holon-test/package.json', import.meta.url), 'utf8'));
const name = `@holon-kit/holon-test-${platform}`;
if (!(name in launcher.optionalDependencies)) {
  console.error(`error: the launcher lists no package ${name} (its optionalDependencies)`);
  process.exit(1);
}
const [os, cpu] = platform.split('-');
const manifest = {
  name,
  version: launcher.version,
  description: `The holon-test binary for ${platform}, installed by the npm package holon-test`,
  license: launcher.license,
  os: [os],
  cpu: [cpu],
  // The Linux binaries are built against glibc (manylinux 2.17); npm skips them on musl.
  ...(os === 'linux' ? { libc: ['glibc'] } : {}),
  files: ['holon-test'],
  preferUnplugged: true,
};
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
writeFileSync(
  join(out, 'README.md'),
  `# ${name}\n\nThe \`holon-test\` binary for ${platform}. Install the npm package \`holon-test\`, which runs it.\n`,
);
copyFileSync(binary, join(out, 'holon-test'));
chmodSync(join(out, 'holon-test'), 0o755);
