/**
 * Options for `vi.waitFor` / `expect.poll` in tests that wait on a condition: poll often, and give
 * up only after a minute. The timeout detects a hang; it is no speed limit (a loaded machine is
 * slow, never wrong), unlike vi.waitFor's own default of one second.
 */
export const waitOptions = { timeout: 60_000, interval: 5 } as const
