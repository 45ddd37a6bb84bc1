import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Installs Debian's package `name` with apt-get (after `apt-get update` if the first try
 * fails), so that `provides` exists; only as root on a machine with apt-get. Otherwise, or
 * if the file is still missing, throws `hint`, which says how to install it by hand.
 */
export function installDebianPackage(name: string, provides: string, hint: string): void {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) throw new Error(`${name} is not installed. ${hint}`);
  process.stderr.write(`${name} not found: installing Debian's "${name}" package…\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-qq', name], { stdio: 'ignore', env });
  } catch {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
    execFileSync('apt-get', ['install', '-y', '-qq', name], { stdio: 'ignore', env });
  }
  if (!existsSync(provides))
    throw new Error(`Installing Debian's ${name} package did not provide ${provides}. ${hint}`);
}
