// Reads a zip's entries with Node alone (its central directory, then each entry stored or
// deflated), so that a test can look inside a downloaded export without an unzip tool.
import { inflateRawSync } from 'node:zlib';

/** The zip's files by name, each as a Buffer. */
export function readZip(buffer) {
  // The end of central directory record: signature 0x06054b50, found from the end.
  let end = buffer.length - 22;
  while (end >= 0 && buffer.readUInt32LE(end) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error('not a zip: no end of central directory');
  let entries = buffer.readUInt16LE(end + 10);
  let at = buffer.readUInt32LE(end + 16);
  // Zip64 (a streamed writer may use it): the locator just before points to the real record.
  if (entries === 0xffff || at === 0xffffffff) {
    const locator = end - 20;
    if (buffer.readUInt32LE(locator) !== 0x07064b50) throw new Error('zip64 without its locator');
    const record = Number(buffer.readBigUInt64LE(locator + 8));
    entries = Number(buffer.readBigUInt64LE(record + 32));
    at = Number(buffer.readBigUInt64LE(record + 48));
  }
  const files = new Map();
  for (let i = 0; i < entries; i += 1) {
    if (buffer.readUInt32LE(at) !== 0x02014b50) throw new Error(`bad central directory entry ${i}`);
    const method = buffer.readUInt16LE(at + 10);
    let compressed = buffer.readUInt32LE(at + 20);
    const nameLength = buffer.readUInt16LE(at + 28);
    const extraLength = buffer.readUInt16LE(at + 30);
    const commentLength = buffer.readUInt16LE(at + 32);
    let local = buffer.readUInt32LE(at + 42);
    const name = buffer.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    // Zip64 sizes and offset live in the extra field (id 1) when the 32-bit ones are full.
    const extra = buffer.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    for (let e = 0; e + 4 <= extra.length; ) {
      const id = extra.readUInt16LE(e);
      const size = extra.readUInt16LE(e + 2);
      if (id === 1) {
        let f = e + 4;
        if (buffer.readUInt32LE(at + 24) === 0xffffffff) f += 8;
        if (compressed === 0xffffffff) {
          compressed = Number(extra.readBigUInt64LE(f));
          f += 8;
        }
        if (local === 0xffffffff) local = Number(extra.readBigUInt64LE(f));
      }
      e += 4 + size;
    }
    const dataAt = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
    const data = buffer.subarray(dataAt, dataAt + compressed);
    files.set(name, method === 0 ? Buffer.from(data) : inflateRawSync(data));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}
