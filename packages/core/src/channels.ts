import { serializeAlexaIncoming, serializeAlexaOutgoing } from './platforms/alexa'
import type { SerializeContext, WireRecord } from './platforms/context'
import { serializeKik } from './platforms/kik'
import { serializeMessengerIncoming, serializeMessengerOutgoing } from './platforms/messenger'
import { serializeSlack } from './platforms/slack'
import { serializeTwitterIncoming, serializeTwitterOutgoing } from './platforms/twitter'
import { serializeUniversal } from './platforms/universal'
import type { CallOptions, Tracker, UniversalChannel } from './tracker-types'
import type { Platform, RecordType } from './types'

/**
 * Turns a call's arguments into wire records. Module-level functions taking the call's
 * arguments, so a tracking call allocates no closure.
 */
export type Serializer<A, B> = (
  a: A,
  b: B,
  ctx: SerializeContext,
  type: RecordType,
) => WireRecord | readonly WireRecord[]

/** The tracker's hot path, as the channels call it. */
export type TrackFn = <A, B>(
  platform: Platform,
  type: RecordType,
  options: CallOptions | undefined,
  serialize: Serializer<A, B>,
  a: A,
  b: B,
) => boolean

type Arg<F> = F extends (a: infer A, ...rest: never[]) => unknown ? A : never

const universal: Serializer<Arg<typeof serializeUniversal>, undefined> = (m, _b, ctx) => serializeUniversal(m, ctx)
const twitterIn: Serializer<Arg<typeof serializeTwitterIncoming>, undefined> = (p, _b, ctx) =>
  serializeTwitterIncoming(p, ctx)
const twitterOut: Serializer<Arg<typeof serializeTwitterOutgoing>, undefined> = (p, _b, ctx) =>
  serializeTwitterOutgoing(p, ctx)
const messengerIn: Serializer<Arg<typeof serializeMessengerIncoming>, undefined> = (b, _x, ctx) =>
  serializeMessengerIncoming(b, ctx)
const messengerOut: Serializer<
  Parameters<typeof serializeMessengerOutgoing>[0],
  Parameters<typeof serializeMessengerOutgoing>[1]
> = (r, res, ctx) => serializeMessengerOutgoing(r, res, ctx)
const slack: Serializer<Arg<typeof serializeSlack>, undefined> = (r, _b, ctx, type) =>
  serializeSlack(r, type as 'incoming' | 'outgoing', ctx)
const kik: Serializer<Arg<typeof serializeKik>, undefined> = (r, _b, ctx, type) =>
  serializeKik(r, type as 'incoming' | 'outgoing', ctx)
const alexaIn: Serializer<Arg<typeof serializeAlexaIncoming>, unknown> = (e, c, ctx) =>
  serializeAlexaIncoming(e, c, ctx)
const alexaOut: Serializer<
  Parameters<typeof serializeAlexaOutgoing>[0],
  Parameters<typeof serializeAlexaOutgoing>[1]
> = (e, r, ctx) => serializeAlexaOutgoing(e, r, ctx)

/** The per-platform entries of a tracker (`tracker.universal.logIncoming`, …), built once per tracker. */
export function buildChannels(
  track: TrackFn,
): Pick<Tracker, 'universal' | 'sms' | 'generic' | 'twitter' | 'messenger' | 'slack' | 'kik' | 'alexa'> {
  const universalChannel = (platform: Platform): UniversalChannel => ({
    logIncoming: (m, o) => track(platform, 'incoming', o, universal, m, undefined),
    logOutgoing: (m, o) => track(platform, 'outgoing', o, universal, m, undefined),
  })
  return {
    universal: universalChannel('universal'),
    sms: universalChannel('sms'),
    generic: universalChannel('generic'),
    twitter: {
      logIncoming: (p, o) => track('twitter', 'incoming', o, twitterIn, p, undefined),
      logOutgoing: (p, o) => track('twitter', 'outgoing', o, twitterOut, p, undefined),
    },
    messenger: {
      logIncoming: (b, o) => track('facebook', 'incoming', o, messengerIn, b, undefined),
      logOutgoing: (r, res, o) => track('facebook', 'outgoing', o, messengerOut, r, res),
    },
    slack: {
      logIncoming: (r, o) => track('slack', 'incoming', o, slack, r, undefined),
      logOutgoing: (r, o) => track('slack', 'outgoing', o, slack, r, undefined),
    },
    kik: {
      logIncoming: (r, o) => track('kik', 'incoming', o, kik, r, undefined),
      logOutgoing: (r, o) => track('kik', 'outgoing', o, kik, r, undefined),
    },
    alexa: {
      logIncoming: (e, c, o) => track('alexa', 'incoming', o, alexaIn, e, c),
      logOutgoing: (e, r, o) => track('alexa', 'outgoing', o, alexaOut, e, r),
    },
  }
}
