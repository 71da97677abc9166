export { isUserMessage, type SlackMessageEventLike, USER_MESSAGE_SUBTYPES } from './incoming'
export { flushSlackTracking, type TrackingFlushOptions, withTrackingFlush } from './lambda'
export { type SlackTrackingMiddleware, type SlackTrackingOptions, slackTracking } from './slack-tracking'
