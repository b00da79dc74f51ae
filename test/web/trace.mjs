// Chromium traces of a page, for the scripts that measure the page's CPU
// (paint-cpu.mjs, many.mjs).

// pageTrace reads a trace (browser.stopTracing's JSON): its events, onMain
// (whether an event ran on a renderer's main thread) and nav, the
// navigationStart of the page (an http document), or undefined.
export function pageTrace(trace) {
  const events = trace.traceEvents || trace;
  const thread = {};
  for (const e of events) if (e.name === 'thread_name') thread[e.pid + ':' + e.tid] = e.args.name;
  const onMain = (e) => thread[e.pid + ':' + e.tid] === 'CrRendererMain';
  const nav = events.find((e) => e.name === 'navigationStart' && onMain(e) && String((e.args.data || {}).documentLoaderURL || '').startsWith('http'));
  return { events, onMain, nav };
}

// mainThreadCPU sums, in ms, the thread time of the top-level tasks
// (RunTask, so nested events are not counted twice) of the main thread of
// renderer pid that start in [from, to): the page's renderer only, since
// Chromium's own pages (such as the omnibox popup) have renderer main
// threads of their own in the trace.
export function mainThreadCPU({ events, onMain }, pid, from = 0, to = Infinity) {
  let cpu = 0;
  for (const e of events) if (e.ph === 'X' && e.name === 'RunTask' && e.tdur != null && e.pid === pid && onMain(e) && e.ts >= from && e.ts < to) cpu += e.tdur / 1000;
  return cpu;
}
