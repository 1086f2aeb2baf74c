#!/usr/bin/env node
// Regroups packages/mcp-server/src into folders by concern ("rooms"), and can be run again after others have
// changed the flat files: it moves each file (and its test beside it) to its room with `git mv`, rewrites every
// relative specifier in the package (static imports and re-exports, `import type`, dynamic `import()`, `vi.mock`
// strings, `new URL('…', import.meta.url)`), makes each room's index.ts export exactly what other rooms and the
// package's own index import of it, sends every import across rooms through that index, and rewrites the paths
// other files of the repository name (`packages/mcp-server/src/x.ts` in docs, comments, scripts). Running it again
// changes nothing. A file that is not in the table below is left where it is and reported, so that its row can be
// added and the script run once more.
//
//   node tooling/scripts/regroup-mcp-server.mjs [REPO_ROOT] [--dry-run]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

/**
 * Where each file goes: its name without `.ts` (a test `x.test.ts` follows `x` unless it has a row of its own) →
 * its folder under src (`.` stays at the top). A room is a first-level folder; a folder inside a room
 * (tools/detached) is part of that room and has no index of its own.
 */
const MAPPING = {
  // The package's public face stays at the top.
  index: '.',
  'public-api.test': '.',
  // Settings: the env/flag table and what it is generated from.
  settings: 'settings',
  'runtime-names': 'settings',
  'worker-limit-settings': 'settings',
  // What the server keeps for clients to read back, and serves as MCP resources: outputs and the journal.
  'output-resources': 'resources',
  'session-resources': 'resources',
  'journal-resource': 'resources',
  'journal-recorder': 'resources',
  'document-resources': 'resources', // notebook-mirror's (issue 49), when merged
  // How one result is written: compaction, text, output schemas, images, the token budget, the schema check.
  'tool-result': 'results',
  'result-rules': 'results',
  'compact-result': 'results',
  'result-text': 'results',
  'result-check': 'results',
  'result-budget': 'results',
  'output-links': 'results',
  'output-schemas': 'results',
  'schema-prune': 'results',
  'display-choice': 'results',
  'python-repr': 'results',
  // The tool pipeline: what a tool is, how it is listed and called, the dynamic catalog.
  'tool-caller': 'tools',
  'callable-tool': 'tools',
  'call-deadline': 'tools',
  'tool-definition': 'tools',
  'stable-tools': 'tools',
  'published-tools': 'tools',
  'dynamic-catalog': 'tools',
  'relist-gate': 'tools',
  progress: 'tools',
  'state-notice': 'tools',
  'reconcile.test': 'tools',
  // Detached cells and MCP tasks: inside the pipeline (the tool caller detaches a call; tasks run through the caller).
  'detached-cells': 'tools/detached',
  'cell-tasks': 'tools/detached',
  // One namespace and its sessions' SDK servers, put together from the rooms above.
  namespace: 'server',
  server: 'server',
  'status-report': 'server',
  'namespace-files': 'server',
  'modern-server': 'server', // mcp-2026's (issue 52), when merged
  // How clients reach a namespace.
  http: 'transports',
  'http-exchange': 'transports',
  'http-hosts': 'transports',
  stdio: 'transports',
  'era-stdio': 'transports', // mcp-2026's (issue 52), when merged
  'http-modern': 'transports', // mcp-2026's (issue 52), when merged
};

/** What each room holds, for the first line of its index. */
const ROOM_PURPOSE = {
  settings: 'the env vars and flags',
  resources: 'kept outputs and the journal, and their MCP resources',
  results: 'how a tool result is written',
  tools: 'the tool pipeline: definitions, listing, the caller, the dynamic catalog, detached cells and tasks',
  server: 'a namespace and its sessions\' MCP servers',
  transports: 'stdio and Streamable HTTP',
};

/** Tracked files whose paths are records of their time, not pointers to today's tree. */
const HISTORY = [/^bench\/RESULTS\.md$/, /(^|\/)CHANGELOG\.md$/];

const args = process.argv.slice(2);
const dryRun = args.includes('--dry-run');
const root = resolve(args.find((arg) => !arg.startsWith('--')) ?? process.cwd());
const SRC = join(root, 'packages/mcp-server/src');
const SELF = 'tooling/scripts/regroup-mcp-server.mjs';
const ts = createRequire(join(root, 'package.json'))('typescript');
const ROOMS = new Set(Object.values(MAPPING).filter((folder) => folder !== '.').map((folder) => folder.split('/')[0]));

const report = { moved: [], rewritten: [], indexes: [], unmapped: [], problems: [] };

// ---- where every file is and goes -------------------------------------------------------------------------------

function listTs(directory) {
  const files = [];
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...listTs(path));
    else if (name.endsWith('.ts')) files.push(path);
  }
  return files;
}

const isTest = (path) => path.endsWith('.test.ts');
/** The room a path (under src) belongs to, or null for the top. */
function roomOf(path) {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 && ROOMS.has(parts[0]) ? parts[0] : null;
}
const roomIndex = (room) => join(SRC, room, 'index.ts');
const isRoomIndex = (path) => basename(path) === 'index.ts' && roomOf(path) !== null && dirname(path) === join(SRC, roomOf(path));

function folderFor(path) {
  const name = basename(path, '.ts');
  if (Object.hasOwn(MAPPING, name)) return MAPPING[name];
  if (name.endsWith('.test') && Object.hasOwn(MAPPING, name.slice(0, -5))) return MAPPING[name.slice(0, -5)];
  return undefined;
}

const current = listTs(SRC);
/** Current path → path after the regroup. */
const destination = new Map();
for (const path of current) {
  if (isRoomIndex(path)) {
    destination.set(path, path);
    continue;
  }
  const folder = folderFor(path);
  if (folder === undefined) {
    report.unmapped.push(relative(root, path));
    destination.set(path, path);
    continue;
  }
  destination.set(path, join(SRC, folder, basename(path)));
}
const targets = new Set(destination.values());
for (const room of ROOMS) targets.add(roomIndex(room));

// ---- reading files --------------------------------------------------------------------------------------------

const sources = new Map();
function parsed(path) {
  if (!sources.has(path)) {
    const text = readFileSync(path, 'utf8');
    sources.set(path, { text, ast: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS) });
  }
  return sources.get(path);
}
const hasExport = (node) => (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export) !== 0;
/**
 * The file a specifier names. One written for the other layout (a flat `./tool-caller.js` in a file merged after
 * the regroup, or a file moved since) is found by its name in the table.
 */
function specifierTarget(from, specifier) {
  const path = resolve(dirname(from), specifier.replace(/\.js$/, '.ts'));
  if (existsSync(path) || !path.endsWith('.ts')) return path;
  const folder = folderFor(path);
  for (const candidate of [join(SRC, folder ?? '.', basename(path)), join(SRC, basename(path))]) if (existsSync(candidate)) return candidate;
  return path;
}
const isRelative = (specifier) => specifier.startsWith('./') || specifier.startsWith('../');

/** A file's exports: local ones (name → 'type' | 'value') and re-exports (name → [file, name there]). */
const exportsCache = new Map();
function exportsOf(path) {
  if (exportsCache.has(path)) return exportsCache.get(path);
  const local = new Map();
  const reexports = new Map();
  const localKinds = new Map();
  const { ast } = parsed(path);
  for (const statement of ast.statements) {
    if (ts.isImportDeclaration(statement) && statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)) {
      for (const element of statement.importClause.namedBindings.elements)
        localKinds.set(element.name.text, statement.importClause.isTypeOnly || element.isTypeOnly ? 'type' : 'value');
    }
    const kind = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) ? 'type' : 'value';
    const names = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((declaration) => declaration.name.getText(ast))
      : statement.name && ts.isIdentifier(statement.name) ? [statement.name.text] : [];
    for (const name of names) localKinds.set(name, kind);
    if (hasExport(statement) && !ts.isExportDeclaration(statement)) for (const name of names) local.set(name, kind);
  }
  for (const statement of ast.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) {
      const inner = (element.propertyName ?? element.name).text;
      if (statement.moduleSpecifier && isRelative(statement.moduleSpecifier.text)) {
        reexports.set(element.name.text, [specifierTarget(path, statement.moduleSpecifier.text), inner, statement.isTypeOnly || element.isTypeOnly]);
      } else {
        local.set(element.name.text, statement.isTypeOnly || element.isTypeOnly ? 'type' : (localKinds.get(inner) ?? 'value'));
      }
    }
  }
  const result = { local, reexports };
  exportsCache.set(path, result);
  return result;
}

/** Where `name`, as `path` exports it, is declared: [current path, name there, kind]; re-exports are followed. */
function declaration(path, name, seen = new Set()) {
  if (seen.has(path) || !existsSync(path)) return undefined;
  seen.add(path);
  const { local, reexports } = exportsOf(path);
  if (local.has(name)) return [path, name, local.get(name)];
  const next = reexports.get(name);
  if (next === undefined) return undefined;
  const found = declaration(next[0], next[1], seen);
  return found && next[2] ? [found[0], found[1], 'type'] : found;
}

// ---- what every specifier becomes ----------------------------------------------------------------------------

const newPath = (path) => destination.get(path) ?? path;
function specifierFrom(fromNew, toNew) {
  const path = relative(dirname(fromNew), toNew).split(sep).join('/').replace(/\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
}

/** Room → Map(declaring file (new path) → Map(name → kind)): what the room's index exports. */
const faces = new Map();
function need(room, file, name, kind) {
  if (!faces.has(room)) faces.set(room, new Map());
  const files = faces.get(room);
  if (!files.has(file)) files.set(file, new Map());
  const names = files.get(file);
  names.set(name, names.get(name) === 'value' || kind === 'value' ? 'value' : 'type');
}

/** The import/export declarations of a file whose specifier names a file of this package, with their named elements. */
function moduleDeclarations(path) {
  const { ast } = parsed(path);
  const found = [];
  for (const statement of ast.statements) {
    const isImport = ts.isImportDeclaration(statement);
    if (!isImport && !ts.isExportDeclaration(statement)) continue;
    const literal = statement.moduleSpecifier;
    if (!literal || !ts.isStringLiteral(literal) || !isRelative(literal.text)) continue;
    const target = specifierTarget(path, literal.text);
    if (!destination.has(target)) continue;
    let elements;
    let typeOnly = false;
    let named = true;
    if (isImport) {
      const clause = statement.importClause;
      typeOnly = clause?.isTypeOnly ?? false;
      if (!clause || clause.name || !clause.namedBindings || !ts.isNamedImports(clause.namedBindings)) named = false;
      else elements = clause.namedBindings.elements;
    } else {
      typeOnly = statement.isTypeOnly;
      if (!statement.exportClause || !ts.isNamedExports(statement.exportClause)) named = false;
      else elements = statement.exportClause.elements;
    }
    const items = named
      ? elements.map((element) => ({
          name: (element.propertyName ?? element.name).text,
          text: element.getText(ast).replace(/^type\s+/, ''),
          type: typeOnly || element.isTypeOnly,
        }))
      : [];
    found.push({ statement, literal, target, isImport, typeOnly, named, items });
  }
  return found;
}

/** Each group of a declaration's names and the specifier it now comes from. */
function plan(path, declarationInfo, throughIndex) {
  const from = newPath(path);
  const fromRoom = roomOf(from);
  const { target, named, items } = declarationInfo;
  const targetNew = newPath(target);
  const targetRoom = roomOf(targetNew);
  const plain = [{ specifier: specifierFrom(from, targetNew), items }];
  const viaIndex = isRoomIndex(target);
  if (!named) {
    if (targetRoom !== null && targetRoom !== fromRoom && !viaIndex) report.problems.push(`${relative(root, path)}: a namespace or side-effect import reaches into ${targetRoom}/ past its index`);
    return plain;
  }
  // Each name's declaring file, for an index and for imports across rooms.
  const resolved = items.map((item) => ({ item, at: declaration(target, item.name) }));
  for (const { item, at } of resolved)
    if (at === undefined && (viaIndex || (targetRoom !== null && targetRoom !== fromRoom))) report.problems.push(`${relative(root, path)}: cannot find where ${item.name} is declared`);
  if (targetRoom === null || targetRoom === fromRoom) {
    if (!viaIndex) return plain;
    // A room importing its own index: straight from each declaring file.
    const groups = new Map();
    for (const { item, at } of resolved) {
      const specifier = specifierFrom(from, newPath(at?.[0] ?? target));
      if (!groups.has(specifier)) groups.set(specifier, []);
      groups.get(specifier).push(item);
    }
    return [...groups].map(([specifier, groupItems]) => ({ specifier, items: groupItems }));
  }
  if (!throughIndex(resolved)) return plain;
  for (const { item, at } of resolved) if (at) need(targetRoom, newPath(at[0]), at[1], item.type ? 'type' : at[2]);
  return [{ specifier: specifierFrom(from, roomIndex(targetRoom)), items }];
}

// Production files first: they decide each room's face. Tests then go through an index when it has every name they
// want, and straight to the file otherwise (a test may look at what its room keeps to itself).
const plans = new Map();
const production = current.filter((path) => !isTest(path) && !isRoomIndex(path));
const tests = current.filter((path) => isTest(path));
for (const path of production) plans.set(path, moduleDeclarations(path).map((info) => ({ info, groups: plan(path, info, () => true) })));
const inFace = (room, file, name) => faces.get(room)?.get(file)?.has(name) ?? false;
for (const path of tests)
  plans.set(
    path,
    moduleDeclarations(path).map((info) => ({
      info,
      groups: plan(path, info, (resolved) => resolved.every(({ at }) => at && inFace(roomOf(newPath(at[0])), newPath(at[0]), at[1]))),
    })),
  );

// ---- new text of each file -----------------------------------------------------------------------------------

const quote = (literal, text) => `${literal.getText().startsWith('"') ? '"' : "'"}${text}${literal.getText().startsWith('"') ? '"' : "'"}`;

function statementText(isImport, typeOnly, items, specifier) {
  const allTypes = items.every((item) => item.type);
  const keyword = isImport ? 'import' : 'export';
  const names = items.map((item) => (item.type && !allTypes ? `type ${item.text}` : item.text));
  const head = `${keyword}${allTypes ? ' type' : ''}`;
  const line = `${head} { ${names.join(', ')} } from '${specifier}';`;
  return line.length <= 140 ? line : `${head} {\n${names.map((name) => `  ${name},\n`).join('')}} from '${specifier}';`;
}

function rewrite(path) {
  const { text, ast } = parsed(path);
  const from = newPath(path);
  const edits = [];
  const entries = plans.get(path) ?? [];
  // Static declarations: imports that now come from the same module become one; a declaration that must be split is.
  const mergeable = (entry) => entry.info.isImport && entry.info.named;
  const bySpecifier = new Map();
  for (const entry of entries.filter(mergeable))
    for (const group of entry.groups) bySpecifier.set(group.specifier, (bySpecifier.get(group.specifier) ?? 0) + 1);
  const merged = new Map();
  for (const entry of entries) {
    const { info, groups } = entry;
    const alone = groups.length === 1 && groups[0].items === info.items && !(mergeable(entry) && bySpecifier.get(groups[0].specifier) > 1);
    if (alone) {
      if (groups[0].specifier !== info.literal.text) edits.push([info.literal.getStart(ast), info.literal.getEnd(), quote(info.literal, groups[0].specifier)]);
    } else if (mergeable(entry)) {
      for (const group of groups) {
        if (!merged.has(group.specifier)) merged.set(group.specifier, { at: info.statement, items: [] });
        merged.get(group.specifier).items.push(...group.items);
      }
      const end = info.statement.getEnd();
      edits.push([info.statement.getStart(ast), text[end] === '\n' ? end + 1 : end, '', info.statement]);
    } else {
      const replacement = groups.map((group) => statementText(info.isImport, info.typeOnly, group.items, group.specifier)).join('\n');
      edits.push([info.statement.getStart(ast), info.statement.getEnd(), replacement]);
    }
  }
  for (const [specifier, { at, items }] of merged) {
    const seen = new Set();
    const unique = items.filter((item) => (seen.has(`${item.type}:${item.text}`) ? false : (seen.add(`${item.type}:${item.text}`), true)));
    const edit = edits.find((candidate) => candidate[3] === at && candidate[4] === undefined);
    // Values first, then types, each in code-point order (the package's usual order).
    const order = (a, b) => Number(a.type) - Number(b.type) || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0);
    const statement = statementText(true, false, unique.sort(order), specifier);
    if (edit[2] === '') edit[2] = `${statement}\n`;
    else edit[2] += `${statement}\n`;
  }
  // Specifiers and paths anywhere else: import(), vi.mock('…'), new URL('…', import.meta.url).
  const visit = (node) => {
    let literal;
    if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      const callee = node.expression.getText(ast);
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword || /^vi\.(mock|doMock|unmock|importActual|importMock)$/.test(callee) || callee === 'require') literal = node.arguments[0];
    } else if (ts.isNewExpression(node) && node.expression.getText(ast) === 'URL' && node.arguments?.length === 2 && ts.isStringLiteralLike(node.arguments[0]) && node.arguments[1].getText(ast) === 'import.meta.url') {
      literal = node.arguments[0];
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      literal = node.argument.literal;
    }
    if (literal && isRelative(literal.text)) {
      const target = literal.text.endsWith('.js') ? specifierTarget(path, literal.text) : resolve(dirname(path), literal.text);
      const moved = newPath(target);
      const rel = relative(dirname(from), moved).split(sep).join('/');
      let next = literal.text.endsWith('.js') ? specifierFrom(from, moved) : rel.startsWith('.') ? rel : `./${rel}`;
      if (literal.text.endsWith('/')) next += '/';
      if (next !== literal.text) edits.push([literal.getStart(ast), literal.getEnd(), quote(literal, next)]);
    }
    ts.forEachChild(node, visit);
  };
  visit(ast);
  if (edits.length === 0) return text;
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [start, end, replacement] of edits) out = out.slice(0, start) + replacement + out.slice(end);
  return out.replace(/^\n+/, '');
}

const outputs = new Map();
for (const path of current) if (!isRoomIndex(path)) outputs.set(path, rewrite(path));

// ---- the rooms' indexes --------------------------------------------------------------------------------------

function indexText(room) {
  const files = [...faces.get(room)].sort(([a], [b]) => a.localeCompare(b));
  const lines = [
    `// The ${room} room: ${ROOM_PURPOSE[room] ?? room}.`,
    "// What other rooms and the package's index use of it: they import the room through this file only.",
  ];
  for (const [file, names] of files) {
    const specifier = specifierFrom(roomIndex(room), file);
    const values = [...names].filter(([, kind]) => kind === 'value').map(([name]) => name).sort();
    const types = [...names].filter(([, kind]) => kind === 'type').map(([name]) => name).sort();
    if (values.length > 0) lines.push(`export { ${values.join(', ')} } from '${specifier}';`);
    if (types.length > 0) lines.push(`export type { ${types.join(', ')} } from '${specifier}';`);
  }
  return `${lines.join('\n')}\n`;
}

// ---- doing it ------------------------------------------------------------------------------------------------

function git(...gitArgs) {
  return execFileSync('git', gitArgs, { cwd: root, encoding: 'utf8' });
}
const tracked = new Set(git('ls-files', '-z').split('\0').filter(Boolean));

for (const [path, text] of outputs) {
  const to = newPath(path);
  if (to !== path) {
    report.moved.push(`${relative(SRC, path)} -> ${relative(SRC, to)}`);
    if (!dryRun) {
      mkdirSync(dirname(to), { recursive: true });
      if (tracked.has(relative(root, path).split(sep).join('/'))) git('mv', relative(root, path), relative(root, to));
      else renameSync(path, to);
    }
  }
  if (text !== sources.get(path).text) {
    report.rewritten.push(relative(SRC, to));
    if (!dryRun) writeFileSync(to, text);
  }
}
for (const room of [...faces.keys()].sort()) {
  const path = roomIndex(room);
  const text = indexText(room);
  const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  report.indexes.push(`${room}/index.ts: ${[...faces.get(room).values()].reduce((sum, names) => sum + names.size, 0)} names`);
  if (text !== before) {
    report.rewritten.push(relative(SRC, path));
    if (!dryRun) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      git('add', relative(root, path));
    }
  }
}

// Paths other files name: packages/mcp-server/src/x.ts (or .js) → packages/mcp-server/src/room/x.ts.
const PATH_REFERENCE = /(mcp-server\/src\/)([a-z0-9-]+(?:\.test)?)\.(ts|js)\b/g;
for (const file of tracked) {
  if (file === SELF || HISTORY.some((pattern) => pattern.test(file)) || file.endsWith('pnpm-lock.yaml')) continue;
  const path = join(root, file);
  if (!existsSync(path) || statSync(path).size > 2_000_000) continue;
  const text = readFileSync(path, 'utf8');
  if (!text.includes('mcp-server/src/') || text.includes('\0')) continue;
  const next = text.replace(PATH_REFERENCE, (whole, prefix, name, extension) => {
    const folder = Object.hasOwn(MAPPING, name) ? MAPPING[name] : name.endsWith('.test') ? MAPPING[name.slice(0, -5)] : undefined;
    if (folder === undefined) {
      report.problems.push(`${file}: names ${whole}, which is in no row of the table`);
      return whole;
    }
    return folder === '.' ? whole : `${prefix}${folder}/${name}.${extension}`;
  });
  if (next !== text) {
    report.rewritten.push(file);
    if (!dryRun) writeFileSync(path, next);
  }
}

const say = (title, items) => process.stdout.write(`${title} (${items.length})${items.length ? `:\n  ${items.join('\n  ')}` : ''}\n`);
say(dryRun ? 'would move' : 'moved', report.moved);
say(dryRun ? 'would rewrite' : 'rewrote', report.rewritten);
say('room indexes', report.indexes);
say('NOT IN THE TABLE (left where they are; add a row to MAPPING and run again)', report.unmapped);
say('problems', report.problems);
if (report.moved.length === 0 && report.rewritten.length === 0) process.stdout.write('nothing to change\n');
