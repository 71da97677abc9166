// Element builders. Every value from a record goes in with textContent (never innerHTML):
// records are untrusted input.

export const $ = (sel) => document.querySelector(sel)

/** Tiny element builder: h('div', { class: 'x', onclick }, 'text', child). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'class') el.className = v
    else if (k === 'dataset') Object.assign(el.dataset, v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue
    el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
  return el
}

const SVG = 'http://www.w3.org/2000/svg'

/** The same for SVG elements. */
export function s(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  if (text !== undefined) el.textContent = text
  return el
}

/** Runs `fn` once calls have stopped for `ms`. */
export function debounce(fn, ms) {
  let timer
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), ms)
  }
}

/** A small button that copies `text` (a long id) to the clipboard; the id is also its title. */
export function copyButton(text, testid) {
  const btn = h(
    'button',
    {
      type: 'button',
      class: 'copy',
      title: `Copy ${text}`,
      'aria-label': `Copy ${text}`,
      'data-testid': testid,
      onclick: async (ev) => {
        ev.stopPropagation()
        try {
          await navigator.clipboard.writeText(text)
          btn.textContent = 'copied'
        } catch {
          // No clipboard (an insecure origin): select the text instead, so Ctrl-C copies it.
          const range = document.createRange()
          range.selectNodeContents(btn.previousElementSibling ?? btn)
          getSelection()?.removeAllRanges()
          getSelection()?.addRange(range)
          btn.textContent = 'selected'
        }
        setTimeout(() => {
          btn.textContent = 'copy'
        }, 1500)
      },
    },
    'copy',
  )
  return btn
}
