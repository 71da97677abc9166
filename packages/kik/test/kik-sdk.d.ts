/** Minimal typing of `@kikinteractive/kik` 2.x (the package ships none), for the tests. */
declare module '@kikinteractive/kik' {
  import type { IncomingMessage as HttpRequest, ServerResponse } from 'node:http'

  namespace Bot {
    class Message {
      static text(text: string): Message
      static link(url: string): Message
      static picture(url: string): Message
      static readReceipt(ids: string[]): Message
      static isTyping(typing: boolean): Message
      addTextResponse(...responses: string[]): this
      setBody(body: string): this
      toJSON(): Record<string, unknown>
    }
    interface IncomingMessage {
      readonly type: string
      readonly body?: string
      readonly from: string
      readonly chatId?: string
      readonly id?: string
      readonly timestamp?: number
      readonly mention?: string | null
      readonly participants?: string[]
      readonly readReceiptRequested?: boolean
      readonly bot: Bot
      reply(messages: unknown): Promise<unknown>
      ignore(): void
    }
  }
  class Bot {
    constructor(options: { username: string; apiKey: string; baseUrl?: string; skipSignatureCheck?: boolean })
    username: string
    apiKey: string
    use(handler: (incoming: Bot.IncomingMessage, next: () => void) => void): this
    onTextMessage(handler: (incoming: Bot.IncomingMessage, next: () => void) => void): this
    onTextMessage(text: string | RegExp, handler: (incoming: Bot.IncomingMessage, next: () => void) => void): this
    send(messages: unknown, recipient: string, chatId?: string): Promise<unknown>
    broadcast(messages: unknown, recipients: string | string[]): Promise<unknown>
    incoming(): (req: HttpRequest, res: ServerResponse, next?: () => void) => void
  }
  export = Bot
}
