import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { clusterPhrases, phraseWords } from '../src/reports/phrase-clusters'

const groups: Record<string, string[]> = JSON.parse(
  readFileSync(new URL('./fixtures/not-handled-phrases.json', import.meta.url), 'utf8'),
)

describe('NotHandled phrase clusters', () => {
  it('normalises case, punctuation, contractions, politeness words and plurals', () => {
    expect(phraseWords("Where's my order??")).toEqual(['where', 'order'])
    expect(phraseWords('where is my order please')).toEqual(['where', 'order'])
    expect(phraseWords('Please cancel my subscriptions!')).toEqual(['cancel', 'subscription'])
    expect(phraseWords("I can't log in")).toEqual(['not', 'log'])
  })

  it('typos and word order keep two phrases together; another request stays apart', () => {
    const labels = (texts: string[]) =>
      clusterPhrases(texts.map((text, i) => ({ text, count: texts.length - i, users: 1 }))).map((c) => c.examples)
    expect(labels(['where is my order', 'when is my order', 'wher is my ordr', 'my order where is it'])).toEqual([
      ['where is my order', 'wher is my ordr', 'my order where is it'],
      ['when is my order'],
    ])
    expect(labels(['cancel my subscription', 'change my subscription'])).toEqual([
      ['cancel my subscription'],
      ['change my subscription'],
    ])
  })

  it('the issue’s example: three ways to ask for an order in one cluster, a cancellation in another', () => {
    const clusters = clusterPhrases([
      { text: 'where is my order', count: 5, users: 4 },
      { text: "where's my order??", count: 2, users: 2 },
      { text: 'where is my order please', count: 1, users: 1 },
      { text: 'cancel my subscription', count: 3, users: 3 },
    ])
    expect(clusters).toEqual([
      {
        label: 'where is my order',
        count: 8,
        users: 7,
        examples: ['where is my order', "where's my order??", 'where is my order please'],
        words: ['where', 'order'],
      },
      {
        label: 'cancel my subscription',
        count: 3,
        users: 3,
        examples: ['cancel my subscription'],
        words: ['cancel', 'subscription'],
      },
    ])
  })

  it('~200 realistic unhandled phrases in 10 groups come out as clusters with purity ≥ 0.9', () => {
    const phrases = Object.entries(groups).flatMap(([group, texts]) =>
      texts.map((text, i) => ({ group, text, count: 1 + ((i * 7) % 5), users: 1 })),
    )
    expect(phrases.length).toBeGreaterThanOrEqual(200)
    const groupOf = new Map(phrases.map((p) => [p.text, p.group]))
    const clusters = clusterPhrases(phrases, { examples: 1_000 })
    // Every phrase lands in exactly one cluster.
    expect(clusters.reduce((n, c) => n + c.examples.length, 0)).toBe(phrases.length)
    // Purity: the share of phrases that belong to their cluster's majority group.
    let majority = 0
    for (const cluster of clusters) {
      const counts = new Map<string, number>()
      for (const text of cluster.examples)
        counts.set(groupOf.get(text) as string, (counts.get(groupOf.get(text) as string) ?? 0) + 1)
      majority += Math.max(...counts.values())
    }
    const purity = majority / phrases.length
    expect(purity).toBeGreaterThanOrEqual(0.9)
    // And it groups: each group's largest cluster holds at least a quarter of that group's phrases (synonyms — "money back" for "refund" — are beyond a lexical method).
    for (const [group, texts] of Object.entries(groups)) {
      const largest = Math.max(...clusters.map((c) => c.examples.filter((t) => groupOf.get(t) === group).length))
      expect(largest / texts.length, group).toBeGreaterThanOrEqual(0.25)
    }
    // Far fewer clusters than phrases.
    expect(clusters.length).toBeLessThan(phrases.length / 4)
    // Largest first.
    expect(clusters.map((c) => c.count)).toEqual([...clusters.map((c) => c.count)].sort((a, b) => b - a))
  })
})
