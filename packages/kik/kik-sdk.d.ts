/**
 * The typing of `@kikinteractive/kik` 2.x, which ships none. `@convotrack/kik`'s own types
 * reference this file, so a TypeScript bot that imports `@convotrack/kik` can
 * `import Bot from '@kikinteractive/kik'` under `strict` with no declaration of its own (without
 * it: TS7016, no declaration file for the module). Written from the SDK's 2.2.1 source (its last
 * release); the parts convotrack touches are exercised against the real SDK by the package tests.
 */
declare module '@kikinteractive/kik' {
  import type { IncomingMessage as HttpRequest, ServerResponse } from 'node:http'

  namespace Bot {
    /** Calls the next handler; a handler that neither replies nor calls it ends the chain. */
    type Next = () => void
    /** A handler registered with `use`, `onTextMessage`, … */
    type Handler = (incoming: IncomingMessage, next: Next) => void
    /** A message to send: a `Message`, a string (sent as a text message) or its wire JSON. */
    type Sendable = Message | string | Record<string, unknown>

    class Message {
      constructor(type: string)
      static text(text: string): Message
      static link(url: string): Message
      static picture(picUrl: string): Message
      static video(videoUrl: string): Message
      static isTyping(typing: boolean): Message
      static readReceipt(messageIds: string[]): Message
      static fromJSON(json: Record<string, unknown>): Message
      readonly type: string
      readonly id?: string
      readonly from: string
      readonly chatId?: string
      readonly chatType?: string
      readonly timestamp?: number
      readonly body?: string
      readonly text?: string
      readonly title?: string
      readonly url?: string
      readonly picUrl?: string
      readonly videoUrl?: string
      readonly stickerUrl?: string
      readonly stickerPackId?: string
      readonly scanData?: string
      readonly messageIds?: string[]
      readonly mention?: string | null
      readonly participants?: string[]
      readonly picked?: string[]
      readonly metadata?: unknown
      readonly readReceiptRequested?: boolean
      readonly isTyping?: boolean
      readonly delay?: number
      isTextMessage(): boolean
      isLinkMessage(): boolean
      isPictureMessage(): boolean
      isVideoMessage(): boolean
      isStartChattingMessage(): boolean
      isScanDataMessage(): boolean
      isStickerMessage(): boolean
      isIsTypingMessage(): boolean
      isDeliveryReceiptMessage(): boolean
      isReadReceiptMessage(): boolean
      isFriendPickerMessage(): boolean
      isMention(): boolean
      isInPublicChat(): boolean
      isInPrivateChat(): boolean
      isInDirectChat(): boolean
      addTextResponse(...responses: string[]): this
      addResponseKeyboard(suggestions: unknown[], isHidden?: boolean, user?: string): this
      setBody(body: string): this
      setText(text: string): this
      setTitle(title: string): this
      setUrl(url: string): this
      setPicUrl(picUrl: string): this
      setVideoUrl(videoUrl: string): this
      setDelay(delay: number): this
      setTypeTime(typeTime: number): this
      setMention(mention: string | null): this
      setAttributionName(name: string): this
      setAttributionIcon(icon: string): this
      setNoForward(noForward: boolean): this
      setNoSave(noSave: boolean): this
      setLoop(loop: boolean): this
      setMuted(muted: boolean): this
      setAutoplay(autoplay: boolean): this
      setKikJsData(data: Record<string, unknown>): this
      toJSON(): Record<string, unknown>
    }

    /** A message a user sent, as handlers receive it. */
    class IncomingMessage extends Message {
      readonly bot: Bot
      /** The match, for a handler registered with `onTextMessage(regexp, …)`. */
      readonly matches?: RegExpMatchArray
      /** Sends to the sender (and chat); ends the handler chain for this message. */
      reply(messages: Sendable | Sendable[]): Promise<unknown>
      markRead(): Promise<unknown>
      startTyping(): Promise<unknown>
      stopTyping(): Promise<unknown>
      /** Ends the handler chain for this message without replying. */
      ignore(): void
    }

    class UserProfile {
      readonly username: string
      readonly displayName: string
      readonly firstName: string
      readonly lastName: string
      readonly profilePicUrl?: string
      readonly profilePicLastModified?: number
      readonly timezone?: string
      toJSON(): Record<string, unknown>
    }

    interface Options {
      username: string
      apiKey: string
      baseUrl?: string
      apiDomain?: string
      incomingPath?: string
      scanCodePath?: string
      maxMessagePerBatch?: number
      manuallySendReadReceipts?: boolean
      receiveReadReceipts?: boolean
      receiveDeliveryReceipts?: boolean
      receiveIsTyping?: boolean
      skipSignatureCheck?: boolean
      staticKeyboard?: unknown
    }
  }

  class Bot {
    constructor(options: Bot.Options)
    username: string
    apiKey: string
    /** The configuration sent by `updateBotConfiguration()`. */
    readonly configuration: Record<string, unknown>
    updateBotConfiguration(): Promise<unknown>
    getBotConfiguration(): Promise<unknown>
    use(handler: Bot.Handler): this
    outgoing(handler: (message: Record<string, unknown>, next: Bot.Next) => void): void
    onTextMessage(handler: Bot.Handler): this
    onTextMessage(text: string | RegExp, handler: Bot.Handler): this
    onLinkMessage(handler: Bot.Handler): this
    onPictureMessage(handler: Bot.Handler): this
    onVideoMessage(handler: Bot.Handler): this
    onStartChattingMessage(handler: Bot.Handler): this
    onScanDataMessage(handler: Bot.Handler): this
    onStickerMessage(handler: Bot.Handler): this
    onIsTypingMessage(handler: Bot.Handler): this
    onDeliveryReceiptMessage(handler: Bot.Handler): this
    onReadReceiptMessage(handler: Bot.Handler): this
    onFriendPickerMessage(handler: Bot.Handler): this
    getKikCodeUrl(options?: {
      data?: unknown
      width?: number
      height?: number
      size?: number
      color?: number
    }): Promise<string>
    getUserProfile(username: string): Promise<Bot.UserProfile>
    getUserProfile(usernames: string[]): Promise<Bot.UserProfile[]>
    send(messages: Bot.Sendable | Bot.Sendable[], recipient: string, chatId?: string): Promise<unknown>
    broadcast(messages: Bot.Sendable | Bot.Sendable[], recipients: string | string[]): Promise<unknown>
    /** The webhook: an Express-style middleware serving `incomingPath`. */
    incoming(): (req: HttpRequest, res: ServerResponse, next?: () => void) => void
  }
  export = Bot
}
