/** The apps under load, by adapter name. */
import { alexaApp } from './alexa'
import type { AppFactory } from './app'
import { botbuilderApp } from './botbuilder'
import { kikApp } from './kik'
import { messengerApp } from './messenger'
import { slackApp } from './slack'
import { universalApp } from './universal'

export const APPS: Record<string, AppFactory> = {
  universal: universalApp,
  alexa: alexaApp,
  slack: slackApp,
  botbuilder: botbuilderApp,
  messenger: messengerApp,
  kik: kikApp,
}

export const ADAPTERS = Object.keys(APPS)
