/**
 * Reading a file the user named (a task file, the pricing file, a corpus): only a regular file.
 * `readFile` on a FIFO waits for a writer without end, and on a device (`/dev/zero`) reads
 * without end; here the file is opened without blocking (O_NONBLOCK) and checked on its open
 * descriptor before a byte is read, so a FIFO, socket or device is an error naming it at once.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** The bytes of the regular file at `path`; anything else throws an errno error that names it (EISDIR for a folder, EINVAL otherwise). */
export async function readRegularFile(path: string): Promise<Buffer> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error("EISDIR: illegal operation on a directory, read"), { code: "EISDIR", path });
    if (!info.isFile()) {
      const kind = info.isFIFO() ? "a FIFO" : info.isSocket() ? "a socket" : info.isCharacterDevice() || info.isBlockDevice() ? "a device" : "not a regular file";
      throw Object.assign(new Error(`${path} is ${kind}, not a regular file: nothing was read from it`), { code: "EINVAL", path });
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
