// Scale: `list` and `search` over 10^3, 10^4, 10^5 names (half functions, half variables), then 100 dynamic tools
// registered from typed functions in the largest namespace: register_tool, tools/list, a dynamic call, and what an
// execute costs once dynamic tools exist.
import { evaluate, settle, startServer } from '../lib/mcp.mjs';
import { summarize } from '../lib/stats.mjs';
import { timeLoop } from './execute.mjs';

const MAKER = [
  'def _bench_make(i):',
  '    def f(x: int = 0) -> int:',
  '        return x + i',
  '    f.__name__ = f.__qualname__ = f"fn_{i:06d}"',
  '    f.__doc__ = f"Function number {i}."',
  '    return f',
].join('\n');

function populate(from, to) {
  return [
    '_bench_g = globals()',
    `for _bench_i in range(${from}, ${to}):`,
    '    if _bench_i % 2 == 0:',
    '        _bench_g[f"fn_{_bench_i:06d}"] = _bench_make(_bench_i)',
    '    else:',
    '        _bench_g[f"var_{_bench_i:06d}"] = _bench_i',
    `${to - from}`,
  ].join('\n');
}

const TOOLS = [
  'def _bench_tool_make(i):',
  '    def tool(a: int, b: str = "x", scale: float = 1.0) -> dict:',
  '        return {"a": a, "b": b, "scale": scale, "i": i}',
  '    tool.__name__ = tool.__qualname__ = f"tool_{i:03d}"',
  '    tool.__doc__ = f"Dynamic tool number {i}: echoes its typed arguments."',
  '    return tool',
  'for _bench_i in range({count}):',
  '    globals()[f"tool_{_bench_i:03d}"] = _bench_tool_make(_bench_i)',
].join('\n');

function ok(result, what) {
  if (result.isError) throw new Error(`${what} failed: ${JSON.stringify(result.structuredContent ?? result).slice(0, 300)}`);
  return result.structuredContent;
}

export async function measureScale(ctx) {
  const server = await startServer(ctx.modules, { env: ctx.serverEnv({ IPYTHON_MCP_OPERATION_TIMEOUT_SECONDS: '300' }) });
  const sizes = [];
  try {
    await evaluate(server, MAKER);
    await settle(server);
    let have = 0;
    for (const size of ctx.n.scaleSizes) {
      const populateStarted = performance.now();
      await evaluate(server, populate(have, size));
      const populateMs = performance.now() - populateStarted;
      have = size;
      const reps = size >= 100_000 ? ctx.n.scaleRepsLarge : ctx.n.scaleReps;
      let listResult;
      const list = await timeLoop(async () => {
        listResult = ok(await server.call('list', {}), 'list');
      }, reps, 1);
      let searchResult;
      const search = await timeLoop(async () => {
        searchResult = ok(await server.call('search', { query: 'fn_0001' }), 'search');
      }, reps, 1);
      sizes.push({
        names: size,
        populateMs,
        list: summarize(list),
        listTotal: listResult.total ?? listResult.functions.length,
        search: summarize(search),
        // A compact listing leaves `total` out when it equals the matches returned.
        searchTotal: searchResult.total ?? searchResult.matches.length,
      });
    }

    // Dynamic tools in the largest namespace.
    const toolCount = 100;
    await evaluate(server, TOOLS.replace('{count}', String(toolCount)));
    const register = [];
    for (let index = 0; index < toolCount; index += 1) {
      const name = `tool_${String(index).padStart(3, '0')}`;
      const started = performance.now();
      ok(await server.call('register_tool', { name }), `register_tool ${name}`);
      register.push(performance.now() - started);
    }
    let listed;
    const toolsList = await timeLoop(async () => {
      listed = await server.client.listTools();
    }, ctx.n.scaleReps, 2);
    const dynamicNames = listed.tools.filter((tool) => tool.name.startsWith('tool_')).length;
    const dynamicCall = await timeLoop(async () => {
      const result = ok(await server.call('tool_042', { a: 1, b: 'y' }), 'dynamic tool call');
      if (result.value?.i !== 42) throw new Error(`dynamic tool returned ${JSON.stringify(result).slice(0, 200)}`);
    }, ctx.n.scaleReps, 2);
    const executeWithTools = await timeLoop(async () => ok(await server.call('execute', { code: '1+1' }), 'execute'), ctx.n.scaleReps * 5, 5);
    return {
      sizes,
      dynamic: {
        namespaceNames: have,
        tools: toolCount,
        listedDynamicTools: dynamicNames,
        listedTotal: listed.tools.length,
        registerTool: summarize(register),
        toolsList: summarize(toolsList),
        dynamicCall: summarize(dynamicCall),
        executeWithTools: summarize(executeWithTools),
      },
    };
  } finally {
    await server.close();
  }
}
