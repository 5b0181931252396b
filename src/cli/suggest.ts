// "Did you mean …?" for names a user types. No imports.

/** Edit distance; a swap of two adjacent characters counts 1 (`aks` → `ask`). */
export function editDistance(a: string, b: string): number {
  // Rows i-2, i-1 and i of the (optimal string alignment) table.
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]
      ) {
        best = Math.min(best, (before[j - 2] as number) + 1);
      }
      row.push(best);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}

/** The name closest to `word` within `maxDistance` (case ignored, first wins; never `word`). */
export function closestName(
  word: string,
  names: readonly string[],
  maxDistance = 2,
): string | undefined {
  let best: { name: string; distance: number } | undefined;
  const typed = word.toLowerCase();
  for (const name of names) {
    if (name === word) continue;
    const distance = editDistance(typed, name.toLowerCase());
    if (distance > maxDistance) continue;
    if (best === undefined || distance < best.distance) {
      best = { name, distance };
    }
  }
  return best?.name;
}

/** ` (did you mean 'NAME'?)` for the closest known name, else `""`. */
export function didYouMean(word: string, names: readonly string[]): string {
  const close = closestName(word, names);
  return close === undefined ? "" : ` (did you mean '${close}'?)`;
}
