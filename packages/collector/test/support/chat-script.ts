/**
 * The three-turn chat the LLM tests run (AI SDK in test/support/llm-chat.ts, OpenLLMetry in
 * test/openllmetry-compat): what is said, in order. Turn 2 is answered after a tool call.
 */
export const CHAT = [
  ['incoming', 'hi'],
  ['outgoing', 'Hello! How can I help?'],
  ['incoming', 'What is the weather in Paris?'],
  ['outgoing', 'It is sunny in Paris, 21 °C.'],
  ['incoming', 'thanks'],
  ['outgoing', "You're welcome!"],
] as const

/** What the user says: the incoming half of {@link CHAT}. */
export const USER_TEXTS: readonly string[] = CHAT.filter(([d]) => d === 'incoming').map(([, t]) => t)
