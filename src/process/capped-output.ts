/**
 * Bounded capture of a command's output: the first `headBytes` and the last `tailBytes`, with
 * a marker saying how much was dropped between them. Memory stays at head + tail + one chunk
 * however much the command prints.
 */
import { StringDecoder } from "node:string_decoder";

export class HeadTailBuffer {
  private head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  /** Every byte pushed, kept or not. */
  totalBytes = 0;

  constructor(private readonly headBytes: number, private readonly tailBytes: number) {}

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (this.headSize < this.headBytes) {
      const take = Math.min(chunk.length, this.headBytes - this.headSize);
      this.head.push(Buffer.from(chunk.subarray(0, take)));
      this.headSize += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0) return;
    this.tail.push(Buffer.from(chunk));
    this.tailSize += chunk.length;
    while (this.tail.length > 1 && this.tailSize - this.tail[0]!.length >= this.tailBytes) {
      this.tailSize -= this.tail.shift()!.length;
    }
  }

  /** Bytes dropped between head and tail. */
  get omittedBytes(): number {
    return Math.max(0, this.totalBytes - this.headSize - this.tailBytes);
  }

  /** The kept text (UTF-8; a character cut at either edge is dropped), with the marker. */
  text(): string {
    const head = new StringDecoder("utf8").write(Buffer.concat(this.head));
    let tail = Buffer.concat(this.tail);
    if (this.omittedBytes === 0) return new StringDecoder("utf8").write(Buffer.concat([Buffer.concat(this.head), tail]));
    tail = tail.subarray(tail.length - this.tailBytes);
    let start = 0;
    while (start < tail.length && start < 4 && (tail[start]! & 0xc0) === 0x80) start++;
    const marker = `\n… [${this.omittedBytes} bytes of output omitted; ${this.totalBytes} bytes in all] …\n`;
    return head + marker + tail.subarray(start).toString("utf8");
  }
}
