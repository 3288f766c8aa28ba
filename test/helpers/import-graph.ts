/**
 * The import statements of a set of TypeScript files, parsed with the TypeScript compiler (no
 * type checking), each relative one resolved to the repository file it names. The architecture
 * test judges the layers on these edges; it takes the files as a map so that its own tests can
 * hand it a small in-memory repository.
 */
import { posix } from 'node:path';
import ts from 'typescript';

/** One import of one file: `import`, `export … from`, or `import('…')` with a literal specifier. */
export interface ImportEdge {
  /** The importing file, repository-relative with `/` separators (`src/load/runner.ts`). */
  readonly from: string;
  /** The specifier as written (`../engine/index.js`, `node:fs`, `undici`). */
  readonly specifier: string;
  /** The repository file a relative specifier names; undefined for packages and builtins. */
  readonly to: string | undefined;
  /**
   * True when the import is erased from the JavaScript: `import type`, `export type`, or an
   * `import('…')` type. `import { type A }` is not: under verbatimModuleSyntax it stays as
   * `import {} from …` and still loads the module.
   */
  readonly typeOnly: boolean;
  /** 1-based line of the statement, for messages. */
  readonly line: number;
}

/** The repository file a relative specifier names, trying the file itself, `.js` → `.ts`, and `/index.ts`. */
export function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, `${base}/index.ts`];
  // An unresolvable relative import is still an edge: the layer rules judge its folder.
  return candidates.find((candidate) => files.has(candidate)) ?? base;
}

/** Every import of one file's text. */
export function parseImports(from: string, text: string, files: ReadonlySet<string>): ImportEdge[] {
  const source = ts.createSourceFile(from, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (node: ts.Node, specifier: string, typeOnly: boolean) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    edges.push({ from, specifier, to: resolveSpecifier(from, specifier, files), typeOnly, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) add(node, expression.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) add(node, argument.text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** The imports of every file of `files` (path → text). */
export function importGraph(files: ReadonlyMap<string, string>): ImportEdge[] {
  const names = new Set(files.keys());
  return [...files].flatMap(([path, text]) => parseImports(path, text, names));
}
