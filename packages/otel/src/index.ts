export { type OtelTrackingOptions, otelTracking, SCOPE_NAME, VERSION } from './otel-tracking'
