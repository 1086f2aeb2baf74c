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
