/** Reading the code blocks of the docs' Markdown pages. */

/** The ```ts blocks of a Markdown text, in order, indented ones (in a list item) dedented. */
export function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!.split("\n").map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line)).join("\n"),
  );
}

