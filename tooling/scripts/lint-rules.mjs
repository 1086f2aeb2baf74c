// Lint rules that need the TypeScript syntax tree (lint.mjs runs them on every file it walks).
import ts from 'typescript';

/** The most positional parameters a function may take; more go in one options object. */
export const MAX_POSITIONAL_PARAMETERS = 5;

/**
 * Every function, method, constructor, arrow function and function type in `text` that takes more than `max`
 * positional parameters (`this` does not count; a rest parameter counts as one), as `path:line: name takes N`.
 */
export function positionalParameterProblems(path, text, max = MAX_POSITIONAL_PARAMETERS) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const problems = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node)) {
      const count = node.parameters.filter((parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === 'this')).length;
      if (count > max) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        problems.push(`${path}:${line}: ${describe(node)} takes ${count} positional parameters (at most ${max}; pass an options object)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

function describe(node) {
  if (ts.isConstructorDeclaration(node)) return `the constructor of ${node.parent.name?.text ?? 'a class'}`;
  const name = node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) ? node.name.text : undefined;
  if (name !== undefined) return name;
  const holder = node.parent;
  if (holder && (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isPropertyDeclaration(holder)) && ts.isIdentifier(holder.name)) return holder.name.text;
  return 'a function';
}

/**
 * The relative module specifiers `text` imports, type-only imports included: `import`/`export … from`, side-effect
 * imports, `import x = require(…)`, `import('…')` types and dynamic `import('…')` (a type import ties two modules
 * as surely as a value import: one cannot be read, moved or compiled alone without the other).
 */
export function relativeImports(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found = [];
  const add = (specifier) => {
    if (specifier !== undefined && ts.isStringLiteralLike(specifier) && /^\.{1,2}\//.test(specifier.text)) found.push(specifier.text);
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The import cycles of `graph` (module → the modules it imports), each once, as the modules around it starting and
 * ending with the same one. Edges to modules outside the graph are ignored.
 */
export function importCycles(graph) {
  const cycles = [];
  const state = new Map();
  const visit = (node, trail) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'active') {
      cycles.push([...trail.slice(trail.indexOf(node)), node]);
      return;
    }
    state.set(node, 'active');
    for (const target of graph.get(node) ?? []) if (graph.has(target)) visit(target, [...trail, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  return cycles;
}
