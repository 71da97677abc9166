/**
 * Groups unhandled inputs that say the same thing in other words or spellings ("where is my
 * order", "where's my order??", "wher is my ordr please").
 *
 * Method (why: no model to download, explainable, fast on thousands of phrases): each phrase
 * becomes a set of normalised content words — lower case, contractions expanded, punctuation,
 * filler and politeness words dropped, a light plural/verb-ending stem — and a word a typo away
 * from a more frequent word takes that word's spelling (edit distance 1, 2 past six letters,
 * found through a deletion index as SymSpell does). Two phrases are alike when the Jaccard
 * similarity of their word sets reaches `threshold` (0.5: half of their words in common; word
 * order does not matter). Phrases are taken most frequent first; each joins the most similar
 * cluster (compared with the cluster's leading phrase) or starts one. Only clusters that can reach
 * the threshold are compared (prefix filtering over an index by word, rarest words first), so the
 * cost follows the overlaps, not the square of the phrases.
 */

/** One distinct unhandled input, counted (a line of the NotHandled report). */
export interface PhraseCount {
  text: string
  count: number
  /** Distinct users who sent it. */
  users: number
}

/** A group of unhandled inputs that mean the same. */
export interface PhraseCluster {
  /** The cluster's most frequent input, as typed. */
  label: string
  /** Messages in the cluster. */
  count: number
  /** Users summed over its inputs (a user who typed two variants counts twice: an upper bound). */
  users: number
  /** Its inputs, most frequent first (at most `examples`). */
  examples: string[]
  /** The content words the cluster is keyed on (normalised). */
  words: string[]
}

/** Options of {@link clusterPhrases}. */
export interface ClusterOptions {
  /** Soft Jaccard similarity at which a phrase joins a cluster. Default 0.5. */
  threshold?: number
  /** Example inputs kept per cluster. Default 5. */
  examples?: number
}

const CONTRACTIONS: Record<string, string> = {
  "where's": 'where is',
  "what's": 'what is',
  "how's": 'how is',
  "who's": 'who is',
  "when's": 'when is',
  "it's": 'it is',
  "that's": 'that is',
  "there's": 'there is',
  "i'm": 'i am',
  "i've": 'i have',
  "i'd": 'i would',
  "i'll": 'i will',
  "you're": 'you are',
  "can't": 'can not',
  cannot: 'can not',
  "won't": 'will not',
  "don't": 'do not',
  "doesn't": 'does not',
  "didn't": 'did not',
  "isn't": 'is not',
  "aren't": 'are not',
  "wasn't": 'was not',
  "haven't": 'have not',
  "hasn't": 'has not',
  "couldn't": 'could not',
  "wouldn't": 'would not',
  "shouldn't": 'should not',
  wanna: 'want to',
  gonna: 'going to',
  gotta: 'got to',
  pls: 'please',
  plz: 'please',
  thx: 'thanks',
  u: 'you',
  ur: 'your',
}

/** Words that change how a request sounds, not what it asks. "not" stays: it flips a meaning. */
const FILLER = new Set(
  (
    'a an the my me mine i you your yours we our us it its this that these those is are was were be been am ' +
    'do does did to of for in on at by with from about into please thanks thank hi hello hey yo ok okay so ' +
    'just can could would will shall should may might must want need like know tell show let get got going ' +
    'have has had some any there here again still now really very kindly sir madam dear guys bot help ' +
    'and or but if then also too well um uh hmm oh how what real'
  ).split(' '),
)

/** The content words of a phrase, normalised, in order of appearance, without repeats. */
export function phraseWords(text: string): string[] {
  const lower = text
    .toLowerCase()
    .replace(/[\u2018\u2019`´]/g, "'")
    // Compounds typed several ways: one word each.
    .replace(/\be[- ]?mail(s?)(?: address(es)?)?\b/g, 'email')
  const words: string[] = []
  for (const raw of lower.split(/[^a-z0-9'\u00c0-\u024f]+/)) {
    const token = raw.replace(/^'+|'+$/g, '')
    if (!token) continue
    const expanded = CONTRACTIONS[token] ?? token.replace(/'s$/, '')
    for (const part of expanded.split(' ')) {
      if (!part || FILLER.has(part)) continue
      const word = stem(part.replace(/'/g, ''))
      if (word && !words.includes(word)) words.push(word)
    }
  }
  return words
}

/** A light English stem: plural and the commonest verb endings, enough to match "orders" / "order". */
function stem(word: string): string {
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3)
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1)
  return word
}

/** Edit distance with transpositions (optimal string alignment), stopping early past `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const rows: number[][] = []
  for (let i = 0; i <= a.length; i++) rows.push([i])
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[]
    const prev = rows[i - 1] as number[]
    let best = Number.POSITIVE_INFINITY
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = d
      if (d < best) best = d
    }
    if (best > max) return max + 1
  }
  return (rows[a.length] as number[])[b.length] as number
}

/**
 * How much two words are the same word: 1 when equal, less for a typo (1 edit up to 6 letters,
 * 2 beyond; "wher" is nearer "where" than "when"), 0 otherwise.
 */
function wordMatch(a: string, b: string): number {
  if (a === b) return 1
  const shorter = Math.min(a.length, b.length)
  if (shorter < 3) return 0
  const max = maxEdits(shorter)
  const distance = editDistance(a, b, max)
  return distance <= max ? 1 - distance / Math.max(a.length, b.length) : 0
}

const maxEdits = (length: number): number => (length <= 6 ? 1 : 2)

/** The word and every string made from it by deleting up to `k` letters (SymSpell's index keys). */
function deletions(word: string, k: number): Set<string> {
  const out = new Set([word])
  let layer = [word]
  for (let round = 0; round < k; round++) {
    const next: string[] = []
    for (const w of layer)
      for (let i = 0; i < w.length; i++) {
        const d = w.slice(0, i) + w.slice(i + 1)
        if (d.length >= 2 && !out.has(d)) {
          out.add(d)
          next.push(d)
        }
      }
    layer = next
  }
  return out
}

/**
 * One spelling per word: a word a typo away from a more frequent one takes that one's spelling.
 * Words within k edits share a string made by deleting at most k letters from each, so only
 * those are compared (linear in the vocabulary, not quadratic).
 */
function spellings(weights: ReadonlyMap<string, number>): Map<string, string> {
  const byFrequency = [...weights].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([w]) => w)
  const spelling = new Map<string, string>()
  const index = new Map<string, string[]>()
  for (const word of byFrequency) {
    let target: string | undefined
    let best = 0
    const keys = word.length >= 3 ? deletions(word, maxEdits(word.length)) : new Set<string>()
    for (const key of keys)
      for (const known of index.get(key) ?? []) {
        const match = wordMatch(word, known)
        if (match > best) {
          best = match
          target = known
        }
      }
    spelling.set(word, target ?? word)
    if (target) continue
    for (const key of keys) {
      const list = index.get(key)
      if (list) list.push(word)
      else index.set(key, [word])
    }
  }
  return spelling
}

/** Jaccard similarity of two sorted lists of word ids. */
function jaccard(a: readonly number[], b: readonly number[]): number {
  let i = 0
  let j = 0
  let common = 0
  while (i < a.length && j < b.length) {
    const x = a[i] as number
    const y = b[j] as number
    if (x === y) {
      common++
      i++
      j++
    } else if (x < y) i++
    else j++
  }
  const union = a.length + b.length - common
  return union === 0 ? 1 : common / union
}

interface Building {
  leader: number[]
  cluster: PhraseCluster
  texts: Array<{ text: string; count: number }>
}

/**
 * Clusters phrases that mean the same; largest cluster first. Pure and deterministic.
 *
 * @example clusterPhrases([{ text: 'where is my order', count: 3, users: 2 }, { text: "where's my order??", count: 1, users: 1 }])[0].count // 4
 */
export function clusterPhrases(phrases: readonly PhraseCount[], options: ClusterOptions = {}): PhraseCluster[] {
  const threshold = options.threshold ?? 0.5
  const keep = options.examples ?? 5
  const sorted = [...phrases].sort((x, y) => y.count - x.count || (x.text < y.text ? -1 : 1))
  const wordsOf = sorted.map((p) => phraseWords(p.text))
  const weights = new Map<string, number>()
  sorted.forEach((p, i) => {
    for (const w of wordsOf[i] as string[]) weights.set(w, (weights.get(w) ?? 0) + p.count)
  })
  const spelling = spellings(weights)
  // Word ids in order of rarity (rarest first): a pair with Jaccard ≥ t shares a word among the
  // first |A| − ⌈t·|A|⌉ + 1 of each set in that order (prefix filtering), and rare words have
  // short lists in the index.
  const canonicalWeight = new Map<string, number>()
  for (const [word, weight] of weights) {
    const to = spelling.get(word) ?? word
    canonicalWeight.set(to, (canonicalWeight.get(to) ?? 0) + weight)
  }
  const ids = new Map(
    [...canonicalWeight].sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1)).map(([word], id) => [word, id]),
  )
  const idOf = (word: string): number => ids.get(word) as number
  const prefix = (set: readonly number[]): readonly number[] =>
    set.slice(0, set.length - Math.ceil(threshold * set.length) + 1)
  const clusters: Building[] = []
  const byWord = new Map<number, Building[]>()
  let empty: Building | undefined
  sorted.forEach((phrase, i) => {
    const words = [...new Set((wordsOf[i] as string[]).map((w) => spelling.get(w) ?? w))]
    const set = words.map(idOf).sort((x, y) => x - y)
    let best: Building | undefined = set.length === 0 ? empty : undefined
    let bestScore = threshold
    const seen = new Set<Building>()
    for (const id of prefix(set))
      for (const candidate of byWord.get(id) ?? []) {
        if (seen.has(candidate)) continue
        seen.add(candidate)
        // Jaccard ≥ t needs the sizes within a factor t of each other.
        const size = candidate.leader.length
        if (size < threshold * set.length || set.length < threshold * size) continue
        const score = jaccard(set, candidate.leader)
        if (score > bestScore || (score === bestScore && best === undefined)) {
          best = candidate
          bestScore = score
        }
      }
    if (best) {
      best.cluster.count += phrase.count
      best.cluster.users += phrase.users
      best.texts.push({ text: phrase.text, count: phrase.count })
      return
    }
    const created: Building = {
      leader: set,
      cluster: { label: phrase.text, count: phrase.count, users: phrase.users, examples: [], words },
      texts: [{ text: phrase.text, count: phrase.count }],
    }
    clusters.push(created)
    if (set.length === 0) empty = created
    for (const id of prefix(set)) {
      const list = byWord.get(id)
      if (list) list.push(created)
      else byWord.set(id, [created])
    }
  })
  return clusters
    .map(({ cluster, texts }) => ({
      ...cluster,
      examples: texts
        .sort((x, y) => y.count - x.count)
        .slice(0, keep)
        .map((t) => t.text),
    }))
    .sort((x, y) => y.count - x.count || (x.label < y.label ? -1 : 1))
}
