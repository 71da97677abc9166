/**
 * The dashboard's read routes that list or count records without naming one (each must answer
 * 200 with JSON whatever was stored), for suites that check every accepted record stays readable.
 */
export const LIST_ROUTES = [
  '/api/conversations',
  '/api/stats',
  '/api/reports/not-handled',
  '/api/reports/intents',
  '/api/reports/events',
  '/api/reports/segments',
  '/api/reports/timeline?bucket=day',
] as const
