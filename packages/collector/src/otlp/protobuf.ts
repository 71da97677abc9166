/**
 * The protobuf wire format, as much as OTLP needs: a reader of tagged fields and a writer of
 * the two small answers (partial success, Status). Hand-written so the collector takes no
 * protobuf runtime (and no generated code) for one message family.
 */

/** A body that is not valid protobuf: the request is refused as a whole (400). */
export class ProtobufError extends Error {}

/** One field as read: its number, wire type and value (a varint, a fixed64 as bigint, bytes). */
export type Field =
  | { no: number; wire: 0; value: bigint }
  | { no: number; wire: 1; value: Buffer }
  | { no: number; wire: 2; value: Buffer }
  | { no: number; wire: 5; value: Buffer }

/** Reads the fields of one message in order; unknown field numbers are the caller's to skip. */
export function* fields(buf: Buffer): Generator<Field> {
  let pos = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (pos >= buf.length) throw new ProtobufError('truncated varint')
      const b = buf[pos++] as number
      result |= BigInt(b & 0x7f) << shift
      if ((b & 0x80) === 0) return result
      shift += 7n
      if (shift > 63n) throw new ProtobufError('varint longer than 10 bytes')
    }
  }
  const take = (n: number): Buffer => {
    if (n < 0 || pos + n > buf.length) throw new ProtobufError('truncated field')
    const out = buf.subarray(pos, pos + n)
    pos += n
    return out
  }
  while (pos < buf.length) {
    const key = varint()
    const no = Number(key >> 3n)
    const wire = Number(key & 7n)
    if (no === 0) throw new ProtobufError('field number 0')
    if (wire === 0) yield { no, wire, value: varint() }
    else if (wire === 1) yield { no, wire, value: take(8) }
    else if (wire === 2) yield { no, wire, value: take(Number(varint())) }
    else if (wire === 5) yield { no, wire, value: take(4) }
    else throw new ProtobufError(`unsupported wire type ${wire}`)
  }
}

/** A varint field as a signed 64-bit integer, in a JS number (token counts and the like). */
export const int64 = (v: bigint): number => Number(BigInt.asIntN(64, v))

function varintBytes(n: bigint): number[] {
  const out: number[] = []
  let v = BigInt.asUintN(64, n)
  do {
    let b = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) b |= 0x80
    out.push(b)
  } while (v > 0n)
  return out
}

/** Writes a message of varint and string/bytes fields, in the order given. */
export function encodeMessage(parts: readonly (readonly [no: number, value: number | string | Buffer])[]): Buffer {
  const chunks: Buffer[] = []
  for (const [no, value] of parts) {
    if (typeof value === 'number') {
      chunks.push(Buffer.from([...varintBytes(BigInt(no << 3)), ...varintBytes(BigInt(value))]))
    } else {
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
      chunks.push(Buffer.from([...varintBytes(BigInt((no << 3) | 2)), ...varintBytes(BigInt(bytes.length))]), bytes)
    }
  }
  return Buffer.concat(chunks)
}
