export { kikTracking } from './kik-tracking'
export { incomingRecord, isSignalMessage, outgoingRecords } from './records'
export { kikSdkUnsupportedReason } from './sdk-support'
export type { KikBot, KikIncoming, KikMiddleware, KikOutgoingInput, KikTracking, KikTrackingOptions } from './types'
