import { alexaUsers, serializeAlexaIncoming, serializeAlexaOutgoing } from './platforms/alexa'
import { oneRecordOf, type RecordUsers, type SerializeContext, type WireRecord } from './platforms/context'
import { serializeEvent } from './platforms/events'
import { kikUsers, serializeKik } from './platforms/kik'
import {
  messengerIncomingUsers,
  messengerOutgoingUsers,
  serializeMessengerIncoming,
  serializeMessengerOutgoing,
} from './platforms/messenger'
import { serializeSlack, slackUsers } from './platforms/slack'
import {
  serializeTwitterIncoming,
  serializeTwitterOutgoing,
  twitterIncomingUsers,
  twitterOutgoingUsers,
} from './platforms/twitter'
import { serializeUniversal } from './platforms/universal'
import type { CallOptions, Tracker, UniversalChannel } from './tracker-types'
import type { Platform, RecordType, TrackedEvent } from './types'

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

/**
 * How a call's arguments become records, both ways: `serialize` builds them (the hot path);
 * `users` only says how many there would be and for whom (see `RecordUsers`), so a call the
 * full queue refuses is counted once per record it would have produced, at no serialization cost.
 */
export interface RecordShape<A, B> {
  serialize: Serializer<A, B>
  users: (a: A, b: B, ctx: SerializeContext, type: RecordType) => RecordUsers
}

/** The tracker's hot path, as the channels call it. */
export type TrackFn = <A, B>(
  platform: Platform,
  type: RecordType,
  options: CallOptions | undefined,
  shape: RecordShape<A, B>,
  a: A,
  b: B,
) => boolean

type Arg<F> = F extends (a: infer A, ...rest: never[]) => unknown ? A : never

const userIdOf = (m: unknown): RecordUsers => oneRecordOf((m as { userId?: unknown } | null | undefined)?.userId)

const universal: RecordShape<Arg<typeof serializeUniversal>, undefined> = {
  serialize: (m, _b, ctx) => serializeUniversal(m, ctx),
  users: userIdOf,
}
const twitterIn: RecordShape<Arg<typeof serializeTwitterIncoming>, undefined> = {
  serialize: (p, _b, ctx) => serializeTwitterIncoming(p, ctx),
  users: twitterIncomingUsers,
}
const twitterOut: RecordShape<Arg<typeof serializeTwitterOutgoing>, undefined> = {
  serialize: (p, _b, ctx) => serializeTwitterOutgoing(p, ctx),
  users: twitterOutgoingUsers,
}
const messengerIn: RecordShape<Arg<typeof serializeMessengerIncoming>, undefined> = {
  serialize: (b, _x, ctx) => serializeMessengerIncoming(b, ctx),
  users: (b, _x, ctx) => messengerIncomingUsers(b, ctx),
}
const messengerOut: RecordShape<
  Parameters<typeof serializeMessengerOutgoing>[0],
  Parameters<typeof serializeMessengerOutgoing>[1]
> = {
  serialize: (r, res, ctx) => serializeMessengerOutgoing(r, res, ctx),
  users: messengerOutgoingUsers,
}
const slack: RecordShape<Arg<typeof serializeSlack>, undefined> = {
  serialize: (r, _b, ctx, type) => serializeSlack(r, type as 'incoming' | 'outgoing', ctx),
  users: (r, _b, _ctx, type) => slackUsers(r, type as 'incoming' | 'outgoing'),
}
const kik: RecordShape<Arg<typeof serializeKik>, undefined> = {
  serialize: (r, _b, ctx, type) => serializeKik(r, type as 'incoming' | 'outgoing', ctx),
  users: (r, _b, _ctx, type) => kikUsers(r, type as 'incoming' | 'outgoing'),
}
const alexaIn: RecordShape<Arg<typeof serializeAlexaIncoming>, unknown> = {
  serialize: (e, c, ctx) => serializeAlexaIncoming(e, c, ctx),
  users: alexaUsers,
}
const alexaOut: RecordShape<
  Parameters<typeof serializeAlexaOutgoing>[0],
  Parameters<typeof serializeAlexaOutgoing>[1]
> = {
  serialize: (e, r, ctx) => serializeAlexaOutgoing(e, r, ctx),
  users: alexaUsers,
}

/** A tracked event: one record, for its `userId`. */
export const eventShape: RecordShape<TrackedEvent, undefined> = {
  serialize: (event) => serializeEvent(event),
  users: userIdOf,
}

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
