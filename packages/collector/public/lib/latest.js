// Latest call wins: a view's load whose answer arrives after a newer load of the same view began
// (the range or the bot changed, live records refreshed it) is dropped, not drawn over the newer one.

/**
 * A turn counter for one kind of load. Each load takes a turn first — `const mine = turn()` —
 * and after each await draws only while `mine()` is still the latest turn taken.
 */
export function latest() {
  let taken = 0
  return () => {
    const mine = ++taken
    return () => mine === taken
  }
}
