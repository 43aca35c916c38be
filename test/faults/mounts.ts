import { execFileSync } from 'node:child_process'
import {
  closeSync,
  existsSync,
  openSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'

/** A mounted file system, or why none could be mounted (the tests then skip with that reason). */
export type Mounted =
  { readonly ok: true; readonly device: string } | { readonly ok: false; readonly reason: string }

function run(command: string, args: readonly string[]): void {
  execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 })
}

function failure(what: string, error: unknown): Mounted {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim().split('\n')[0]
  return {
    ok: false,
    reason: `${what} is not possible here (${stderr || (error as Error).message})`,
  }
}

function notRoot(): Mounted | undefined {
  return process.getuid?.() === 0
    ? undefined
    : { ok: false, reason: 'mounting a file system needs root' }
}

/** Mounts a tmpfs of `sizeKib` KiB on the existing folder `at`. */
export function mountTmpfs(at: string, sizeKib: number): Mounted {
  const refused = notRoot()
  if (refused !== undefined) return refused
  try {
    run('mount', ['-t', 'tmpfs', '-o', `size=${sizeKib}k,mode=0700`, 'tmpfs', at])
    return { ok: true, device: 'tmpfs' }
  } catch (error) {
    return failure('mounting a tmpfs', error)
  }
}

/**
 * Makes an ext4 file system in the file `image` (`sizeMib` MiB) and mounts it on `at` through a
 * loop device, with `errors=remount-ro`: on an error, the kernel turns it read-only under the
 * processes that have files open on it, as it does to a failing disk. `device` is the loop
 * device's name (`loop0`).
 */
export function mountExt4Image(image: string, at: string, sizeMib: number): Mounted {
  const refused = notRoot()
  if (refused !== undefined) return refused
  try {
    writeFileSync(image, '')
    truncateSync(image, sizeMib * 1024 * 1024)
    run('mkfs.ext4', ['-q', '-F', image])
    run('mount', ['-o', 'loop,errors=remount-ro', image, at])
  } catch (error) {
    return failure('mounting an ext4 image on a loop device', error)
  }
  const source = execFileSync('findmnt', ['-n', '-o', 'SOURCE', at], { encoding: 'utf8' }).trim()
  return { ok: true, device: source.replace('/dev/', '') }
}

/**
 * The way to turn the ext4 file system on `device` read-only as a disk error does: ext4's
 * `trigger_fs_error`, which reports an error and, under `errors=remount-ro`, remounts it.
 * Returns that action, or `undefined` when this kernel has no such switch.
 */
export function ext4Failure(device: string): (() => void) | undefined {
  const trigger = `/sys/fs/ext4/${device}/trigger_fs_error`
  if (!existsSync(trigger)) return undefined
  return () => writeFileSync(trigger, 'fault test\n')
}

/** Whether `at` is mounted read-only now (newer kernels say `emergency_ro` after an error). */
export function isReadOnly(at: string): boolean {
  const options = execFileSync('findmnt', ['-n', '-o', 'OPTIONS', at], { encoding: 'utf8' })
  return options
    .trim()
    .split(',')
    .some((option) => option === 'ro' || option === 'emergency_ro')
}

/** Unmounts `at` when something is mounted there (lazily, so that a process still holding a file cannot keep it). */
export function unmount(at: string): void {
  try {
    execFileSync('findmnt', ['-n', at], { stdio: 'ignore' })
  } catch {
    return
  }
  run('umount', ['-l', at])
}

/**
 * Fills the file system of `folder` with a file until the disk is full (ENOSPC); returns the
 * file's path. Removing it frees the space again.
 */
export function fillUp(folder: string): string {
  const path = join(folder, 'filler')
  const chunk = Buffer.alloc(64 * 1024, 0x5a)
  const fd = openSync(path, 'w')
  try {
    for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
      for (;;) {
        try {
          if (writeSync(fd, chunk, 0, size) < size) break
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
          break
        }
      }
    }
  } finally {
    closeSync(fd)
  }
  return path
}

/** Removes the filler file. */
export function freeUp(path: string): void {
  rmSync(path, { force: true })
}
